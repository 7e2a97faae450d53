"""utils.model_zoo.load_url: hub's load_state_dict_from_url under torch's older name, as in torch."""
import torch

import ember


def test_load_url_is_hubs_loader_as_in_torch():
    import torch.utils.model_zoo
    import ember.utils.model_zoo

    assert torch.utils.model_zoo.load_url is torch.hub.load_state_dict_from_url
    assert ember.utils.model_zoo.load_url is ember.hub.load_state_dict_from_url


def test_load_url_loads_a_checkpoint_as_torch(tmp_path):
    state = {"weight": [[1.0, 2.0], [3.0, 4.0]], "bias": [0.5, -0.5]}
    torch.save({k: torch.tensor(v) for k, v in state.items()}, tmp_path / "layer.pt")
    url = (tmp_path / "layer.pt").as_uri()
    theirs = torch.utils.model_zoo.load_url(url, model_dir=str(tmp_path / "torch"), progress=False)
    ours = ember.utils.model_zoo.load_url(url, model_dir=str(tmp_path / "ember"), progress=False)
    assert {k: v.tolist() for k, v in ours.items()} == {k: v.tolist() for k, v in theirs.items()}
