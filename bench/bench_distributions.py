"""ember.distributions against torch.distributions: the calls a training loop makes once a step.

Usage: ``python bench/bench_distributions.py``. Each row builds a distribution from fixed tensors and
draws or scores, in both libraries; the figures are CPU ms per call (median of interleaved repeats,
``time.process_time``) and the median of the per-repeat ratios ember / torch.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import torch  # noqa: E402

import ember  # noqa: E402
from _timing import compare  # noqa: E402


def _programs(lib):
    D = lib.distributions
    logits, loc, scale = lib.randn(2), lib.zeros(256, 8), lib.ones(256, 8)
    alpha = lib.full((1000,), 2.0, requires_grad=True)
    cov = lib.eye(8) * 2 + 0.1
    points = lib.randn(256, 8)

    def categorical_step():  # a policy-gradient step: build, draw an action, score it
        d = D.Categorical(logits=logits)
        return d.log_prob(d.sample())

    def normal_rsample_log_prob():  # a VAE's posterior: draw and score a batch
        d = D.Normal(loc, scale)
        return d.log_prob(d.rsample())

    def normal_kl():
        return D.kl_divergence(D.Normal(loc, scale), D.Normal(0.0, 1.0))

    def gamma_rsample_backward():  # implicit reparameterisation gradients
        D.Gamma(alpha, 1.0).rsample().sum().backward()

    def mvn_log_prob():
        return D.MultivariateNormal(lib.zeros(8), cov).log_prob(points)

    return {"Categorical: build, sample, log_prob": categorical_step,
            "Normal (256x8): rsample, log_prob": normal_rsample_log_prob,
            "kl_divergence(Normal, Normal) (256x8)": normal_kl,
            "Gamma (1000): rsample, backward": gamma_rsample_backward,
            "MultivariateNormal (8): log_prob of 256": mvn_log_prob}


def main() -> None:
    torch.set_num_threads(1)
    ember_programs, torch_programs = _programs(ember), _programs(torch)
    print("| call | ember ms | torch ms | ember / torch |")
    print("|---|---|---|---|")
    for name in ember_programs:
        result = compare({"ember": ember_programs[name], "torch": torch_programs[name]}, repeats=7, number=50)
        print(f"| {name} | {result['ember_ms']:.3f} | {result['torch_ms']:.3f} | {result['ember/torch']:.2f} |")


if __name__ == "__main__":
    main()
