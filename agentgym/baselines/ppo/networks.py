"""The networks the thin PPO baseline trains.

Three policies share one interface (`encode` one observation, `collate` a batch, `forward` to
masked logits and values), so the PPO loop is the same code for all:

* `MLPPolicy`: a Box observation and Discrete actions (CartPole): actor and critic MLPs.
* `HashPolicy`: scores (observation history, candidate action) pairs from the hashed features of
  `agentgym.baselines.ppo.features` with a small MLP; a value head on the history features. Fast
  on a CPU.
* `LMPolicy`: a local causal language model (transformers) scores each candidate by its
  log-likelihood given the rendered conversation; gradients flow into the model; a value head
  on the model's last hidden state of the conversation.

Both candidate policies have a risk head (`forward_with_risk`): the estimated probability that a
candidate does harm, on detached inputs, which the trainer's calibration learns and applies
(`agentgym.baselines.calibration`).

Candidate policies act over ``info["candidates"]`` (see `agentgym.agents.candidates`): the
number of candidates varies per step, so logits are padded to the longest list and masked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from agentgym.baselines.ppo.features import FEATURES, HashFeaturizer, Transcript

__all__ = ["MLPPolicy", "HashPolicy", "LMPolicy", "POLICIES", "make_policy", "policy_spec", "MASK"]

#: The logit of a padding slot: finite, so 0 * logp stays 0 in the entropy.
MASK = -1e9


def _layer(layer: nn.Linear, std: float = math.sqrt(2), bias: float = 0.0) -> nn.Linear:
    """Orthogonal init, as in CleanRL and SB3."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class MLPPolicy(nn.Module):
    """Actor and critic MLPs for a flat Box observation and Discrete actions (SB3's MlpPolicy).

    Args:
        obs_dim: the observation's size. n_actions: the number of discrete actions.
        hidden: units per hidden layer (two tanh layers each for actor and critic).
    """

    kind = "mlp"
    candidates = False

    def __init__(self, obs_dim: int, n_actions: int, hidden: int = 64) -> None:
        super().__init__()
        self.config = {"obs_dim": int(obs_dim), "n_actions": int(n_actions), "hidden": int(hidden)}
        self.actor = nn.Sequential(_layer(nn.Linear(obs_dim, hidden)), nn.Tanh(), _layer(nn.Linear(hidden, hidden)),
                                   nn.Tanh(), _layer(nn.Linear(hidden, n_actions), std=0.01))
        self.critic = nn.Sequential(_layer(nn.Linear(obs_dim, hidden)), nn.Tanh(), _layer(nn.Linear(hidden, hidden)),
                                    nn.Tanh(), _layer(nn.Linear(hidden, 1), std=1.0))

    def encode(self, obs: Any) -> np.ndarray:
        return np.asarray(obs, dtype=np.float32).reshape(-1)

    def collate(self, items: Sequence[np.ndarray]) -> torch.Tensor:
        return torch.from_numpy(np.stack(items))

    def forward(self, batch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.actor(batch), self.critic(batch).squeeze(-1)


@dataclass
class HashBatch:
    """A collated batch of candidate observations for `HashPolicy`."""

    hist: torch.Tensor
    hist_offsets: torch.Tensor
    own: torch.Tensor
    own_offsets: torch.Tensor
    shape: torch.Tensor
    shape_offsets: torch.Tensor
    entity: torch.Tensor
    entity_offsets: torch.Tensor
    #: (candidate, entity) pairs: candidate `link_cand[i]` names entity `link_entity[i]`.
    link_cand: torch.Tensor
    link_entity: torch.Tensor
    #: Per candidate: how many word features it has in all (its own and its entities').
    n_features: torch.Tensor
    #: Per candidate: its step in the batch and its position in that step's list.
    step: torch.Tensor
    pos: torch.Tensor
    counts: torch.Tensor


def _offsets(lengths: Any) -> torch.Tensor:
    lengths = np.asarray(lengths, dtype=np.int64)
    return torch.from_numpy(np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64))


@dataclass(slots=True)
class HashObs:
    """One step's features for `HashPolicy`: the history's, each candidate's own words and its
    structural features, each distinct entity's words, and the (candidate, entity) links, as
    flat arrays."""

    hist: np.ndarray
    own: np.ndarray
    own_lengths: np.ndarray
    shape: np.ndarray
    shape_lengths: np.ndarray
    entity: np.ndarray
    entity_lengths: np.ndarray
    link_cand: np.ndarray
    link_entity: np.ndarray
    n_features: np.ndarray


def _cat(arrays: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if len(arrays) else np.zeros(0, dtype=np.int64)


class HashPolicy(nn.Module):
    """Scores (history, candidate) pairs from hashed features with an MLP on [h, c, s, h * c].

    A candidate has two embeddings: `c`, the mean of its words' embeddings (its own and those
    around the values it names, each value's computed once per step), and `s`, the mean of its
    structural features' (how it relates to the conversation, in terms that name no tool, see
    `HashFeaturizer._shape`), kept apart so that a few such features are not drowned by tens of
    words. The value head reads the history embedding `h`. A risk head (`forward_with_risk`)
    with embeddings of its own, over the same features (and the history, detached), estimates
    the probability that taking the candidate does harm; it is trained on its own loss, which
    never moves the policy's weights, nor the policy's loss the risk head's.

    Args:
        buckets: hash buckets of the featurizer. dim: embedding size. hidden: MLP width.
        recent: latest messages with position-tagged features. features: the structural
        features' version (`FEATURES`). words: False for structural features only (see
        `HashFeaturizer`).
    """

    kind = "hash"
    candidates = True

    def __init__(self, buckets: int = 1 << 14, dim: int = 32, hidden: int = 128, recent: int = 4,
                 features: int = FEATURES, words: bool = True) -> None:
        super().__init__()
        self.config = {"buckets": int(buckets), "dim": int(dim), "hidden": int(hidden), "recent": int(recent),
                       "features": int(features)}
        if not words:  # kept out of the default config: checkpoints with words stay as they were
            self.config["words"] = False
        self.featurizer = HashFeaturizer(buckets, recent, features, words)
        # Dense gradients over a modest table: on a CPU, coalescing the sparse gradients of a
        # minibatch's tens of thousands of feature rows costs more than a dense Adam step.
        self.hist_emb = nn.EmbeddingBag(buckets, dim, mode="mean")
        self.cand_emb = nn.EmbeddingBag(buckets, dim, mode="sum")
        self.shape_emb = nn.EmbeddingBag(buckets, dim, mode="mean")
        self.score = nn.Sequential(_layer(nn.Linear(4 * dim, hidden)), nn.Tanh(), _layer(nn.Linear(hidden, 1), std=0.01))
        self.value = nn.Sequential(_layer(nn.Linear(dim, hidden)), nn.Tanh(), _layer(nn.Linear(hidden, 1), std=1.0))
        # The risk head has embeddings of its own: what makes a call harmful (a limit passed,
        # an approval missing) is not what makes it useful, and the policy's loss never moves them.
        self.risk_words = nn.EmbeddingBag(buckets, dim, mode="sum")
        self.risk_shape = nn.EmbeddingBag(buckets, dim, mode="mean")
        self.risk_head = nn.Sequential(_layer(nn.Linear(3 * dim, hidden // 2)), nn.Tanh(),
                                       _layer(nn.Linear(hidden // 2, 1), std=0.01, bias=-2.0))

    def encode(self, obs: tuple[Transcript, list[str]]) -> HashObs:
        t, candidates = obs
        f = self.featurizer.candidates(candidates, t)
        own_len = np.array([len(o) for o in f.own], dtype=np.int64)
        shape_len = np.array([len(x) for x in f.shape], dtype=np.int64)
        ent_len = np.array([len(e) for e in f.entities], dtype=np.int64)
        link_c = np.array([j for j, mine in enumerate(f.links) for _ in mine], dtype=np.int64)
        link_e = np.array([k for mine in f.links for k in mine], dtype=np.int64)
        n_feat = own_len.astype(np.float32)
        np.add.at(n_feat, link_c, ent_len[link_e])
        return HashObs(self.featurizer.history(t), _cat(f.own), own_len, _cat(f.shape), shape_len,
                       _cat(f.entities), ent_len, link_c, link_e, np.maximum(n_feat, 1.0))

    def collate(self, items: Sequence[HashObs]) -> HashBatch:
        counts = np.array([len(x.own_lengths) for x in items])
        n_ent = np.array([len(x.entity_lengths) for x in items])
        c0 = np.concatenate([[0], np.cumsum(counts)[:-1]])
        e0 = np.concatenate([[0], np.cumsum(n_ent)[:-1]])
        t = torch.from_numpy
        return HashBatch(
            hist=t(np.concatenate([x.hist for x in items])),
            hist_offsets=_offsets([len(x.hist) for x in items]),
            own=t(np.concatenate([x.own for x in items])),
            own_offsets=_offsets(np.concatenate([x.own_lengths for x in items])),
            shape=t(np.concatenate([x.shape for x in items])),
            shape_offsets=_offsets(np.concatenate([x.shape_lengths for x in items])),
            entity=t(np.concatenate([x.entity for x in items])),
            entity_offsets=_offsets(np.concatenate([x.entity_lengths for x in items])),
            link_cand=t(np.concatenate([x.link_cand + c for x, c in zip(items, c0)])),
            link_entity=t(np.concatenate([x.link_entity + e for x, e in zip(items, e0)])),
            n_features=t(np.concatenate([x.n_features for x in items])),
            step=t(np.repeat(np.arange(len(items)), counts)),
            pos=t(np.concatenate([np.arange(n) for n in counts])),
            counts=t(counts),
        )

    def _embed(self, b: HashBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = torch.tanh(self.hist_emb(b.hist, b.hist_offsets))
        c = self.cand_emb(b.own, b.own_offsets)
        if len(b.entity_offsets):
            c = c.index_add(0, b.link_cand, self.cand_emb(b.entity, b.entity_offsets)[b.link_entity])
        c = torch.tanh(c / b.n_features.unsqueeze(-1))
        s = torch.tanh(self.shape_emb(b.shape, b.shape_offsets))
        return h, c, s

    def _pad(self, b: HashBatch, values: torch.Tensor, fill: float) -> torch.Tensor:
        out = torch.full((len(b.counts), int(b.counts.max())), fill, dtype=values.dtype)
        return out.index_put((b.step, b.pos), values)

    def forward(self, b: HashBatch) -> tuple[torch.Tensor, torch.Tensor]:
        h, c, s = self._embed(b)
        hs = h[b.step]
        scores = self.score(torch.cat([hs, c, s, hs * c], dim=-1)).squeeze(-1)
        return self._pad(b, scores, MASK), self.value(h).squeeze(-1)

    def forward_with_risk(self, b: HashBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """`forward`, and the risk head's logits per candidate (padded with a large negative)."""
        h, c, s = self._embed(b)
        hs = h[b.step]
        scores = self.score(torch.cat([hs, c, s, hs * c], dim=-1)).squeeze(-1)
        rc = self.risk_words(b.own, b.own_offsets)
        if len(b.entity_offsets):
            rc = rc.index_add(0, b.link_cand, self.risk_words(b.entity, b.entity_offsets)[b.link_entity])
        rc = torch.tanh(rc / b.n_features.unsqueeze(-1))
        rs = torch.tanh(self.risk_shape(b.shape, b.shape_offsets))
        risk = self.risk_head(torch.cat([hs.detach(), rc, rs], dim=-1)).squeeze(-1)
        return self._pad(b, scores, MASK), self.value(h).squeeze(-1), self._pad(b, risk, MASK)


@dataclass
class LMBatch:
    """A collated batch for `LMPolicy`: one row per (step, candidate), context then candidate."""

    ids: torch.Tensor
    attention: torch.Tensor
    #: [rows, width - 1]: True at the positions that predict a candidate token.
    scored: torch.Tensor
    #: Per step: the row of its first candidate and the index of the context's last token.
    first_row: torch.Tensor
    ctx_last: torch.Tensor
    #: Per row: the index of its last token (the candidate's end).
    row_last: torch.Tensor
    step: torch.Tensor
    pos: torch.Tensor
    counts: torch.Tensor


class LMPolicy(nn.Module):
    """A causal LM scores each candidate by log p(candidate | conversation); a value head on top.

    The score is the candidate's log-likelihood per token (``score="mean"``, the default: with
    the total, an untrained model would always pick the shortest candidate) or in total
    (``"sum"``). The LM head runs only on candidate positions, so long contexts stay cheap.

    Args:
        model: a local directory with a Hugging Face causal LM and its tokenizer (nothing is
            downloaded).
        max_context: the conversation is cut to its last this-many tokens.
        max_candidate: a candidate is cut to its first this-many tokens.
        score: ``mean`` or ``sum`` of the candidate's token log-probabilities.
    """

    kind = "lm"
    candidates = True

    def __init__(self, model: str, max_context: int = 256, max_candidate: int = 48, score: str = "mean") -> None:
        super().__init__()
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if score not in ("mean", "sum"):
            raise ValueError(f"score must be 'mean' or 'sum', got {score!r}")
        self.config = {"model": str(model), "max_context": int(max_context), "max_candidate": int(max_candidate),
                       "score": score}
        self.tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=True)
        self.lm = AutoModelForCausalLM.from_pretrained(model, local_files_only=True, dtype=torch.float32)
        width = self.lm.get_input_embeddings().embedding_dim
        self.value_head = _layer(nn.Linear(width, 1), std=1.0)
        self.risk_head = _layer(nn.Linear(width, 1), std=0.01, bias=-2.0)
        pad = self.tokenizer.pad_token_id
        self.pad_id = int(pad if pad is not None else (self.tokenizer.eos_token_id or 0))

    def _tokens(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode(self, obs: tuple[Transcript, list[str]]) -> tuple[list[int], list[list[int]]]:
        t, candidates = obs
        ctx = self._tokens(t.render())[-self.config["max_context"]:] or [self.pad_id]
        cands = [(self._tokens(c)[: self.config["max_candidate"]] or [self.pad_id]) for c in candidates]
        return ctx, cands

    def collate(self, items: Sequence[tuple[list[int], list[list[int]]]]) -> LMBatch:
        rows, scored, first, last, counts = [], [], [], [], []
        for ctx, cands in items:
            first.append(len(rows))
            last.append(len(ctx) - 1)
            counts.append(len(cands))
            for c in cands:
                rows.append(ctx + c)
                scored.append((len(ctx), len(c)))
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        att = torch.zeros((len(rows), width), dtype=torch.long)
        # sc[i, j] = 1 where token j + 1 of row i is a candidate token (predicted at position j).
        sc = torch.zeros((len(rows), width - 1), dtype=torch.bool)
        for i, (r, (start, n)) in enumerate(zip(rows, scored)):
            ids[i, : len(r)] = torch.tensor(r)
            att[i, : len(r)] = 1
            sc[i, start - 1: start - 1 + n] = True
        step = np.repeat(np.arange(len(items)), counts)
        pos = np.concatenate([np.arange(n) for n in counts])
        return LMBatch(ids=ids, attention=att, scored=sc, first_row=torch.tensor(first), ctx_last=torch.tensor(last),
                       row_last=torch.tensor([len(r) - 1 for r in rows]), step=torch.from_numpy(step),
                       pos=torch.from_numpy(pos), counts=torch.tensor(counts))

    def _run(self, b: LMBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        hidden = self.lm.base_model(input_ids=b.ids, attention_mask=b.attention).last_hidden_state
        rows, cols = b.scored.nonzero(as_tuple=True)
        logits = self.lm.get_output_embeddings()(hidden[rows, cols]).float()
        token_logp = torch.log_softmax(logits, dim=-1).gather(-1, b.ids[rows, cols + 1].unsqueeze(-1)).squeeze(-1)
        scores = torch.zeros(len(b.ids), dtype=token_logp.dtype).index_add(0, rows, token_logp)
        if self.config["score"] == "mean":
            scores = scores / b.scored.sum(-1).clamp(min=1)
        out = torch.full((len(b.counts), int(b.counts.max())), MASK, dtype=scores.dtype)
        out = out.index_put((b.step, b.pos), scores)
        value = self.value_head(hidden[b.first_row, b.ctx_last].float()).squeeze(-1)
        return out, value, hidden

    def forward(self, b: LMBatch) -> tuple[torch.Tensor, torch.Tensor]:
        out, value, _ = self._run(b)
        return out, value

    def forward_with_risk(self, b: LMBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """`forward`, and the risk head's logits per candidate, from the model's last hidden state
        at the candidate's end (detached: the risk loss never moves the model)."""
        out, value, hidden = self._run(b)
        last = hidden[torch.arange(len(b.ids)), b.row_last].float().detach()
        risk = self.risk_head(last).squeeze(-1)
        padded = torch.full_like(out, MASK).index_put((b.step, b.pos), risk)
        return out, value, padded


# ================================================================================ registry
POLICIES: dict[str, type[nn.Module]] = {"mlp": MLPPolicy, "hash": HashPolicy, "lm": LMPolicy}


def make_policy(spec: Mapping[str, Any]) -> nn.Module:
    """A policy from ``{"kind": ..., "config": {...}}`` (see `policy_spec`)."""
    kind = spec.get("kind")
    if kind not in POLICIES:
        raise ValueError(f"unknown policy kind {kind!r}; known: {', '.join(POLICIES)}")
    config = dict(spec.get("config", {}))
    if kind == "hash":
        config.setdefault("features", 1)  # saved before the features had versions
    return POLICIES[kind](**config)


def policy_spec(policy: nn.Module) -> dict[str, Any]:
    """What rebuilds `policy`'s architecture: its kind and constructor config."""
    return {"kind": policy.kind, "config": dict(policy.config)}
