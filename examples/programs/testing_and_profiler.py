"""Checking a refactoring with torch.testing.assert_close and finding where the time goes with the
profiler: a fused attention against a reference one, tolerances per dtype, the mismatch message,
and a key_averages table with record_function regions."""
import math

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function
from torch.testing import assert_close, make_tensor


def reference_attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1)
    return weights @ v


def main():
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 10, 8, dtype=torch.float64) for _ in range(3))
    assert_close(F.scaled_dot_product_attention(q, k, v), reference_attention(q, k, v))
    print("scaled_dot_product_attention matches the reference")
    mask = torch.ones(10, 10, dtype=torch.bool).tril()
    assert_close(F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                 F.scaled_dot_product_attention(q, k, v, is_causal=True))
    print("an explicit mask equals is_causal=True")

    assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-6]))
    print("float32 within default tolerance")
    try:
        assert_close(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.5, 3.0]))
    except AssertionError as error:
        lines = str(error).splitlines()
        print(lines[0])
        print(lines[1])
        print("names the greatest difference:", any("Greatest absolute difference: 0.5" in l for l in lines))
    try:
        assert_close(torch.tensor([1, 2]), torch.tensor([1.0, 2.0]))
    except AssertionError as error:
        print("dtype check:", "dtype" in str(error))
    assert_close(torch.tensor([1, 2]), torch.tensor([1.0, 2.0]), check_dtype=False)
    assert_close(torch.tensor([float("nan")]), torch.tensor([float("nan")]), equal_nan=True)
    assert_close({"a": [torch.ones(2)]}, {"a": [torch.ones(2)]})
    print("containers, nan and mixed dtypes compared")
    t = make_tensor((3, 4), dtype=torch.float32, device="cpu", low=-1, high=1)
    print("make_tensor:", t.shape, t.dtype, bool((t >= -1).all() and (t <= 1).all()))

    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    x = torch.randn(128, 32)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(3):
            with record_function("forward_pass"):
                loss = model(x).pow(2).mean()
            with record_function("backward_pass"):
                loss.backward()
    events = prof.key_averages()
    names = {e.key for e in events}
    print("regions recorded:", {"forward_pass", "backward_pass"} <= names)
    print("the affine product recorded:", any("addmm" in n.lower() for n in names))
    print("forward_pass called 3 times:", next(e.count for e in events if e.key == "forward_pass") == 3)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    print("table has a header:", "Name" in table and "CPU total" in table)


if __name__ == "__main__":
    main()
