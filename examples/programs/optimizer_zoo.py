"""Every optimizer on the same ill-conditioned least-squares problem, from the same start: a few steps
each with the options people turn on (momentum, nesterov, amsgrad, centered, maximize, weight decay),
then the schedulers people chain, read through get_last_lr and state_dict, and LBFGS with a line search."""
import torch
from torch import optim
from torch.optim import lr_scheduler

A = torch.tensor([[3.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 0.1]])
b = torch.tensor([1.0, -2.0, 0.5])


def loss_of(w):
    return 0.5 * w @ A @ w - b @ w


def run(make, steps=5):
    w = torch.tensor([1.0, 1.0, -1.0], requires_grad=True)
    optimizer = make([w])

    def closure():
        optimizer.zero_grad()
        loss = loss_of(w)
        loss.backward()
        return loss

    for _ in range(steps):
        optimizer.step(closure)
    return w.detach(), loss_of(w).item(), optimizer


def show(name, make, steps=5, digits=4):
    w, loss, optimizer = run(make, steps)
    print(f"{name:<22}", [f"{v:.{digits}f}" for v in w.tolist()], f"{loss:.{digits}f}")
    return optimizer


def optimizers():
    show("SGD", lambda p: optim.SGD(p, lr=0.1))
    show("SGD momentum", lambda p: optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01))
    show("SGD nesterov", lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True))
    show("SGD maximize", lambda p: optim.SGD(p, lr=0.01, maximize=True))
    show("Adam", lambda p: optim.Adam(p, lr=0.1))
    show("Adam amsgrad", lambda p: optim.Adam(p, lr=0.1, amsgrad=True, weight_decay=0.1))
    show("AdamW", lambda p: optim.AdamW(p, lr=0.1, weight_decay=0.5))
    show("Adamax", lambda p: optim.Adamax(p, lr=0.1))
    show("NAdam", lambda p: optim.NAdam(p, lr=0.1))
    show("NAdam decoupled", lambda p: optim.NAdam(p, lr=0.1, weight_decay=0.1, decoupled_weight_decay=True))
    show("RAdam", lambda p: optim.RAdam(p, lr=0.1), steps=8)
    show("RAdam decoupled", lambda p: optim.RAdam(p, lr=0.1, weight_decay=0.1, decoupled_weight_decay=True),
         steps=8)
    show("Adagrad", lambda p: optim.Adagrad(p, lr=0.3, lr_decay=0.01, initial_accumulator_value=0.1))
    show("Adadelta", lambda p: optim.Adadelta(p, lr=1.0, rho=0.8))
    show("RMSprop", lambda p: optim.RMSprop(p, lr=0.01))
    show("RMSprop centered", lambda p: optim.RMSprop(p, lr=0.01, centered=True, momentum=0.5))
    show("Rprop", lambda p: optim.Rprop(p, lr=0.05, etas=(0.4, 1.3), step_sizes=(1e-3, 1.0)))
    show("ASGD", lambda p: optim.ASGD(p, lr=0.1, t0=2))
    adam = show("Adam (state)", lambda p: optim.Adam(p, lr=0.1))
    state = adam.state_dict()
    print("adam state:", sorted(state["state"][0]), state["state"][0]["step"], state["param_groups"][0]["params"])
    lbfgs = show("LBFGS", lambda p: optim.LBFGS(p, lr=1, max_iter=5), steps=1, digits=3)
    # (3 digits: the loss's float32 dot products are BLAS's, whose summation order may differ in the last bit)
    print("lbfgs evaluations:", lbfgs.state[lbfgs.param_groups[0]["params"][0]]["func_evals"])


def lbfgs_wolfe():
    w = torch.tensor([1.0, 1.0, -1.0], requires_grad=True)
    optimizer = optim.LBFGS([w], lr=1, max_iter=20, line_search_fn="strong_wolfe", tolerance_grad=1e-9)

    def closure():
        optimizer.zero_grad()
        loss = loss_of(w)
        loss.backward()
        return loss

    optimizer.step(closure)
    exact = torch.linalg.solve(A, b)
    print("strong Wolfe LBFGS reaches the solve:", torch.allclose(w.detach(), exact, atol=1e-4))


def schedulers():
    def lrs(make, steps=8, metric=None):
        w = torch.zeros(1, requires_grad=True)
        optimizer = optim.SGD([w], lr=0.1, momentum=0.9)
        scheduler = make(optimizer)
        seen = []
        for step in range(steps):
            optimizer.step()
            if metric is None:
                scheduler.step()
            else:
                scheduler.step(metric[step])
            seen.append(f"{optimizer.param_groups[0]['lr']:.5f}")
        return seen, scheduler

    cases = {
        "StepLR": lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5),
        "MultiStepLR": lambda o: lr_scheduler.MultiStepLR(o, milestones=[2, 5], gamma=0.1),
        "ExponentialLR": lambda o: lr_scheduler.ExponentialLR(o, gamma=0.8),
        "PolynomialLR": lambda o: lr_scheduler.PolynomialLR(o, total_iters=6, power=2.0),
        "ConstantLR": lambda o: lr_scheduler.ConstantLR(o, factor=0.25, total_iters=3),
        "CyclicLR": lambda o: lr_scheduler.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2,
                                                     mode="triangular2"),
        "OneCycleLR": lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=8, pct_start=0.25),
        "OneCycle linear": lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=8, anneal_strategy="linear",
                                                             three_phase=True),
        "Chained": lambda o: lr_scheduler.ChainedScheduler([lr_scheduler.ConstantLR(o, factor=0.5, total_iters=2),
                                                            lr_scheduler.ExponentialLR(o, gamma=0.9)]),
        "Multiplicative": lambda o: lr_scheduler.MultiplicativeLR(o, lambda epoch: 0.95),
    }
    for name, make in cases.items():
        seen, scheduler = lrs(make)
        print(f"{name:<16}", seen)
    seen, scheduler = lrs(make=lambda o: lr_scheduler.ReduceLROnPlateau(o, mode="max", factor=0.5, patience=1,
                                                                        threshold=0.01, cooldown=1),
                          metric=[0.5, 0.6, 0.6, 0.6, 0.6, 0.61, 0.62, 0.62])
    print("ReduceLROnPlateau", seen, scheduler.num_bad_epochs, scheduler.best)
    seen, scheduler = lrs(lambda o: lr_scheduler.OneCycleLR(o, max_lr=0.5, total_steps=8))
    momentum = scheduler.optimizer.param_groups[0]["momentum"]
    print("OneCycle momentum cycles back:", f"{momentum:.4f}", sorted(scheduler.state_dict())[:4])
    w = torch.zeros(1, requires_grad=True)
    cyclic = lr_scheduler.CosineAnnealingLR(optim.SGD([w], lr=1.0), T_max=4)
    print("cosine:", [f"{(cyclic.optimizer.step(), cyclic.step(), cyclic.get_last_lr()[0])[2]:.4f}" for _ in range(8)])


def main():
    optimizers()
    lbfgs_wolfe()
    schedulers()


if __name__ == "__main__":
    main()
