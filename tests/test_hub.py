"""ember.hub against torch.hub: checkpoints downloaded once (from a local HTTP server), hubconf entry points, and
GitHub repositories served by the same server."""
import functools
import hashlib
import http.server
import io
import json
import os
import sys
import threading
import zipfile

import numpy as np
import pytest
import torch

import ember


@pytest.fixture
def server(tmp_path):
    """A local HTTP server of ``tmp_path / 'site'``; yields (site directory, base URL)."""
    site = tmp_path / "site"
    site.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield site, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Files of the site; a listing asked for past its first page (``?page=2``) is empty, as GitHub's API ends."""

    def do_GET(self):
        if "page=" in self.path and "page=1" not in self.path.split("?")[1].split("&"):
            body = b"[]"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def hub_dirs(tmp_path):
    """Each library's hub cache in its own directory, restored afterwards."""
    before = ember.hub.get_dir(), torch.hub.get_dir()
    ember.hub.set_dir(str(tmp_path / "ember_hub"))
    torch.hub.set_dir(str(tmp_path / "torch_hub"))
    yield
    ember.hub.set_dir(before[0])
    torch.hub.set_dir(before[1])


def _checkpoint(site, name: str) -> tuple:
    """A torch checkpoint of a state dict written into the site as ``name`` with its SHA-256's start in it."""
    state = {"weight": torch.arange(6.0).reshape(2, 3), "bias": torch.tensor([0.5, -1.0])}
    buffer = io.BytesIO()
    torch.save(state, buffer)
    digest = hashlib.sha256(buffer.getvalue()).hexdigest()
    filename = name.format(digest[:8])
    (site / filename).write_bytes(buffer.getvalue())
    return filename, state


def test_load_state_dict_from_url_as_torch(server, hub_dirs, tmp_path):
    site, base = server
    filename, state = _checkpoint(site, "net-{}.pth")
    ours = ember.hub.load_state_dict_from_url(f"{base}/{filename}", check_hash=True, progress=False)
    theirs = torch.hub.load_state_dict_from_url(f"{base}/{filename}", check_hash=True, progress=False)
    assert ours.keys() == theirs.keys() == state.keys()
    for key in state:
        np.testing.assert_array_equal(ours[key].numpy(), theirs[key].numpy())
    cached = os.path.join(ember.hub.get_dir(), "checkpoints", filename)
    assert os.path.exists(cached)
    (site / filename).unlink()  # downloaded once: the cache serves the second call
    again = ember.hub.load_state_dict_from_url(f"{base}/{filename}", progress=False)
    np.testing.assert_array_equal(again["bias"].numpy(), state["bias"].numpy())


def test_file_name_model_dir_and_zip(server, hub_dirs, tmp_path):
    site, base = server
    filename, state = _checkpoint(site, "plain.pth")
    with zipfile.ZipFile(site / "zipped.zip", "w") as archive:
        archive.write(site / filename, "inner.pth")
    loaded = ember.hub.load_state_dict_from_url(f"{base}/{filename}", model_dir=str(tmp_path / "models"),
                                                file_name="renamed.pth", progress=False)
    assert os.path.exists(tmp_path / "models" / "renamed.pth")
    np.testing.assert_array_equal(loaded["weight"].numpy(), state["weight"].numpy())
    unzipped = ember.hub.load_state_dict_from_url(f"{base}/zipped.zip", progress=False)
    np.testing.assert_array_equal(unzipped["weight"].numpy(), state["weight"].numpy())


def test_wrong_hash_is_refused_as_torch_refuses_it(server, hub_dirs):
    site, base = server
    filename, _ = _checkpoint(site, "net-{}.pth")
    (site / "net-00000000.pth").write_bytes((site / filename).read_bytes())
    messages = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError, match="invalid hash value") as raised:
            lib.hub.load_state_dict_from_url(f"{base}/net-00000000.pth", check_hash=True, progress=False)
        messages.append(str(raised.value))
        assert not os.listdir(os.path.join(lib.hub.get_dir(), "checkpoints"))  # nothing half-written stays
    assert messages[0] == messages[1]


def test_downloads_load_weights_only_by_default(server, hub_dirs):
    """A downloaded file runs no code unless weights_only=False is asked for."""
    site, base = server
    buffer = io.BytesIO()
    torch.save({"step": 3, "fn": functools.partial(int, "7")}, buffer)
    (site / "code.pth").write_bytes(buffer.getvalue())
    with pytest.raises(ember.serialization.UnpicklingError):
        ember.hub.load_state_dict_from_url(f"{base}/code.pth", progress=False)
    assert ember.hub.load_state_dict_from_url(f"{base}/code.pth", progress=False, weights_only=False)["fn"]() == 7


def test_download_url_to_file(server, tmp_path):
    site, base = server
    (site / "data.bin").write_bytes(b"x" * 300_000)
    digest = hashlib.sha256(b"x" * 300_000).hexdigest()
    ember.hub.download_url_to_file(f"{base}/data.bin", str(tmp_path / "out.bin"), hash_prefix=digest[:10],
                                   progress=False)
    assert (tmp_path / "out.bin").read_bytes() == b"x" * 300_000
    with pytest.raises(Exception) as missing:
        ember.hub.download_url_to_file(f"{base}/absent.bin", str(tmp_path / "absent.bin"), progress=False)
    assert "404" in str(missing.value)


HUBCONF = '''
dependencies = ["numpy"]
import helper
def small(width=2, bias=True):
    """A linear layer of the given width."""
    import ember
    return ember.nn.Linear(width, helper.OUT, bias=bias)
def _private():
    pass
'''


def _write_repo(root):
    root.mkdir(parents=True, exist_ok=True)
    (root / "hubconf.py").write_text(HUBCONF)
    (root / "helper.py").write_text("OUT = 4\n")
    return root


def test_load_local(tmp_path):
    repo = str(_write_repo(tmp_path / "repo"))
    model = ember.hub.load(repo, "small", 3, source="local", bias=False)
    assert isinstance(model, ember.nn.Linear) and model.weight.shape == (4, 3) and model.bias is None
    with pytest.raises(RuntimeError, match="Cannot find callable missing in hubconf"):
        ember.hub.load(repo, "missing", source="local")
    with pytest.raises(ValueError, match='Unknown source: "svn"'):
        ember.hub.load(repo, "small", source="svn")
    (tmp_path / "repo" / "hubconf.py").write_text('dependencies = ["no_such_package_xyz"]\n')
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_xyz"):
        ember.hub.load(repo, "small", source="local")


def _serve_github(site, owner, name, ref):
    """The site as GitHub for one repository: its zipball of ``ref`` and the API's list of branches."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{owner}-{name}-abc123/hubconf.py", HUBCONF)
        archive.writestr(f"{owner}-{name}-abc123/helper.py", "OUT = 5\n")
    (site / owner / name / "zipball").mkdir(parents=True)
    (site / owner / name / "zipball" / ref).write_bytes(buffer.getvalue())
    api = site / "repos" / owner / name
    api.mkdir(parents=True)
    branches = [{"name": ref, "commit": {"sha": "abc123"}}]
    (api / "branches").write_text(json.dumps(branches))
    (api / "tags").write_text("[]")


def test_github_source(server, hub_dirs, monkeypatch):
    site, base = server
    monkeypatch.setattr(ember.hub, "_GITHUB", base)
    monkeypatch.setattr(ember.hub, "_GITHUB_API", base)
    monkeypatch.delitem(sys.modules, "helper", raising=False)  # another test's repository imported its own
    _serve_github(site, "someone", "models", "v1")
    answers = iter(["y"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))  # asked once: not trusted yet
    model = ember.hub.load("someone/models:v1", "small", width=2)
    assert model.weight.shape == (5, 2)
    assert os.path.isdir(os.path.join(ember.hub.get_dir(), "someone_models_v1"))
    trusted = open(os.path.join(ember.hub.get_dir(), "trusted_list")).read().split()
    assert trusted == ["someone_models"]
    (site / "someone" / "models" / "zipball" / "v1").unlink()  # cached from now on
    assert ember.hub.list("someone/models:v1") == ["small"]
    assert ember.hub.help("someone/models:v1", "small") == "A linear layer of the given width."


def test_github_untrusted_and_unknown_ref(server, hub_dirs, monkeypatch):
    site, base = server
    monkeypatch.setattr(ember.hub, "_GITHUB", base)
    monkeypatch.setattr(ember.hub, "_GITHUB_API", base)
    _serve_github(site, "someone", "models", "v1")
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    with pytest.raises(Exception, match="Untrusted repository."):
        ember.hub.load("someone/models:v1", "small")
    with pytest.raises(ValueError, match="Cannot find v2 in"):
        ember.hub.load("someone/models:v2", "small", trust_repo=True)
    with pytest.raises(ValueError, match="owner/name"):
        ember.hub.load("not-a-repo", "small", trust_repo=True)


def test_zip_entries_outside_the_cache_are_refused(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../escape.txt", "x")
    with zipfile.ZipFile(buffer) as archive, pytest.raises(ValueError, match="escapes"):
        ember.hub._safe_extract(archive, str(tmp_path / "into"))
    assert not (tmp_path / "escape.txt").exists()


def test_get_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    monkeypatch.setenv("EMBER_HOME", str(tmp_path / "home"))
    assert ember.hub.get_dir() == str(tmp_path / "home" / "hub")
    monkeypatch.delenv("EMBER_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert ember.hub.get_dir() == str(tmp_path / "cache" / "ember" / "hub")
