"""REINFORCE on a corridor written in NumPy: a policy network picks "left" or "right" through a Categorical
distribution, and a running-average baseline reduces the variance of the policy gradient."""
import numpy as np
import torch
import torch.distributions as D
from torch import nn


class Corridor:
    """Cells 0..length-1; the agent starts at 0 and is rewarded for reaching the last cell quickly."""

    def __init__(self, length=6, max_steps=20):
        self.length, self.max_steps = length, max_steps

    def reset(self):
        self.position, self.steps = 0, 0
        return self.observation()

    def observation(self):
        one_hot = np.zeros(self.length, dtype=np.float32)
        one_hot[self.position] = 1.0
        return one_hot

    def step(self, action):
        self.position = max(0, self.position + (1 if action == 1 else -1))
        self.steps += 1
        at_goal = self.position == self.length - 1
        reward = 1.0 if at_goal else -0.02
        done = at_goal or self.steps >= self.max_steps
        return self.observation(), reward, done


def run_episode(env, policy):
    observation, done = env.reset(), False
    log_probs, rewards = [], []
    while not done:
        logits = policy(torch.from_numpy(observation))
        action_distribution = D.Categorical(logits=logits)
        action = action_distribution.sample()
        log_probs.append(action_distribution.log_prob(action))
        observation, reward, done = env.step(int(action.item()))
        rewards.append(reward)
    return torch.stack(log_probs), rewards


def discounted_returns(rewards, gamma=0.95):
    returns, running = [], 0.0
    for reward in reversed(rewards):
        running = reward + gamma * running
        returns.append(running)
    return torch.tensor(returns[::-1])


def main():
    torch.manual_seed(0)
    np.random.seed(0)

    # the distribution itself, on explicit inputs
    coin = D.Categorical(probs=torch.tensor([0.25, 0.75]))
    print("log_prob of action 1:", coin.log_prob(torch.tensor(1)))
    print("entropy:", coin.entropy())
    print("batch and event shapes:", coin.batch_shape, coin.event_shape)
    print("sample shape:", coin.sample((5,)).shape, coin.sample((5,)).dtype)

    env = Corridor()
    policy = nn.Sequential(nn.Linear(env.length, 32), nn.Tanh(), nn.Linear(32, 2))
    optimizer = torch.optim.Adam(policy.parameters(), lr=0.02)
    baseline, totals = 0.0, []
    for episode in range(300):
        log_probs, rewards = run_episode(env, policy)
        returns = discounted_returns(rewards)
        advantages = returns - baseline
        loss = -(log_probs * advantages).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        baseline = 0.9 * baseline + 0.1 * returns[0].item()
        totals.append(sum(rewards))

    with torch.no_grad():
        start = torch.from_numpy(env.reset())
        right = D.Categorical(logits=policy(start)).probs[1].item()
    greedy_steps, observation, done = 0, env.reset(), False
    while not done:
        with torch.no_grad():
            action = policy(torch.from_numpy(observation)).argmax().item()
        observation, _, done = env.step(action)
        greedy_steps += 1
    print("early episodes scored below late ones:", np.mean(totals[:20]) < np.mean(totals[-20:]))
    print("late episodes average above 0.7:", np.mean(totals[-20:]) > 0.7)
    print("moves right from the start with probability above 0.9:", right > 0.9)
    print("greedy policy walks straight to the goal:", greedy_steps == env.length - 1)


if __name__ == "__main__":
    main()
