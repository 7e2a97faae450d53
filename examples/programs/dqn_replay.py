# corpus: slow
"""Deep Q-learning on a corridor world: epsilon-greedy actions from a seeded Generator, a replay buffer
of preallocated tensors, a target network refreshed with load_state_dict under no_grad, Q-values of the
taken actions picked with gather, double-DQN targets, SmoothL1Loss and gradient clipping by value."""
import copy

import torch
from torch import nn

LENGTH = 8  # states 0..7; reaching 7 pays 1, every step costs 0.01


def step(state, action):
    """Action 0 moves left, 1 moves right; returns the next state, the reward and whether the episode ended."""
    nxt = max(0, min(LENGTH - 1, state + (1 if action == 1 else -1)))
    done = nxt == LENGTH - 1
    return nxt, (1.0 if done else -0.01), done


def one_hot(states):
    return nn.functional.one_hot(states, LENGTH).float()


class ReplayBuffer:
    def __init__(self, capacity):
        self.states = torch.zeros(capacity, dtype=torch.long)
        self.actions = torch.zeros(capacity, dtype=torch.long)
        self.rewards = torch.zeros(capacity)
        self.next_states = torch.zeros(capacity, dtype=torch.long)
        self.dones = torch.zeros(capacity, dtype=torch.bool)
        self.capacity, self.size, self.cursor = capacity, 0, 0

    def push(self, state, action, reward, next_state, done):
        i = self.cursor
        self.states[i], self.actions[i], self.rewards[i] = state, action, reward
        self.next_states[i], self.dones[i] = next_state, done
        self.cursor = (self.cursor + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch, generator):
        index = torch.randint(0, self.size, (batch,), generator=generator)
        return (self.states[index], self.actions[index], self.rewards[index],
                self.next_states[index], self.dones[index])


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(42)
    online = nn.Sequential(nn.Linear(LENGTH, 32), nn.ReLU(), nn.Linear(32, 2))
    target = copy.deepcopy(online)
    target.requires_grad_(False)
    optimizer = torch.optim.Adam(online.parameters(), lr=5e-3)
    criterion = nn.SmoothL1Loss()
    buffer = ReplayBuffer(500)
    gamma, batch = 0.95, 32
    print("target is a copy:", all(torch.equal(a, b) for a, b in zip(online.parameters(), target.parameters())))
    print("target needs no grad:", any(p.requires_grad for p in target.parameters()))

    steps_taken, episode_lengths = 0, []
    for episode in range(40):
        state, done, length = 0, False, 0
        epsilon = max(0.05, 1.0 - episode / 20)
        while not done and length < 50:
            if torch.rand((), generator=generator).item() < epsilon:
                action = int(torch.randint(0, 2, (), generator=generator))
            else:
                with torch.no_grad():
                    action = online(one_hot(torch.tensor(state))).argmax().item()
            nxt, reward, done = step(state, action)
            buffer.push(state, action, reward, nxt, done)
            state, length, steps_taken = nxt, length + 1, steps_taken + 1

            if buffer.size >= batch:
                s, a, r, s2, d = buffer.sample(batch, generator)
                q = online(one_hot(s)).gather(1, a.unsqueeze(1)).squeeze(1)
                with torch.no_grad():
                    best = online(one_hot(s2)).argmax(1, keepdim=True)  # double DQN: online picks, target rates
                    bootstrap = target(one_hot(s2)).gather(1, best).squeeze(1)
                    goal = r + gamma * bootstrap * (~d).float()
                loss = criterion(q, goal)
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_value_(online.parameters(), 1.0)
                optimizer.step()
            if steps_taken % 50 == 0:
                with torch.no_grad():
                    target.load_state_dict(online.state_dict())
        episode_lengths.append(length)
        if episode % 10 == 9:
            print(f"episode {episode + 1}: length {length}, buffer {buffer.size}, loss {loss.item():.4f}")

    print("episode lengths, first ten:", episode_lengths[:10])
    print("last five episodes take the shortest path:", episode_lengths[-5:] == [LENGTH - 1] * 5)
    with torch.no_grad():
        q_values = online(one_hot(torch.arange(LENGTH)))
    print("greedy policy:", q_values.argmax(1).tolist()[:-1])
    print("value rises towards the goal:", bool((q_values.max(1).values[1:-1].diff() > 0).all()))
    print("Q-values:", q_values[:3].round(decimals=2))
    print("loss grad_fn:", type(loss.grad_fn).__name__, "gather grad_fn:", type(q.grad_fn).__name__)
    print("buffer dtypes:", buffer.states.dtype, buffer.rewards.dtype, buffer.dones.dtype)


if __name__ == "__main__":
    main()
