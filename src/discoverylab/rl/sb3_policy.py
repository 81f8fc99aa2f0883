"""`SlotPolicy`: a MaskablePPO policy whose head scores object slots with shared weights.

The discrete layout names objects by slot, so a plain MLP head must learn "act on the slot that
is named in the task" once per slot (docs/rl.md, "Why flatten + MLP learns nothing"). This head
(the design of benchmarks/ppo.py, over `OneHotObservation` features) embeds every slot and
dialog row with one shared network and scores each slot action, each slot pair (PUT, USE) and
each dialog choice from its own embedding and a global context, so the rule is learned once:

    MaskablePPO(SlotPolicy, SB3VecEnv("DialogTest", num_envs=8))

Imports torch and sb3-contrib (the `rl` extra).
"""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from discoverylab.rl.actions import FIXED, PAIR, SINGLE
from discoverylab.rl.features import BUCKETS, NOTE_SLOT_WIDTH, layout_size


class SlotHead(nn.Module):
    """Features -> (action logits, value latent). Dimensions follow `features`' layout."""

    def __init__(self, size: int, window: int = 7, slots: int = 12, dialog: int = 10, locations: int = 8,
                 buckets: int = BUCKETS, hidden: int = 64) -> None:  # fmt: skip
        super().__init__()
        self.w2, self.k, self.d, self.b, self.h = window * window, slots, dialog, buckets, hidden
        sizes = {(notes, history): layout_size(window, slots, dialog, buckets, notes, history)
                 for notes in (False, True) for history in (False, True)}  # fmt: skip
        found = [key for key, value in sizes.items() if value == size]
        if not found:
            raise ValueError(f"SlotPolicy expects one of {sorted(sizes.values())} features (window {window}, {slots} "
                             f"slots, {dialog} dialog options, {buckets} buckets; with or without notes and history), "
                             f"got {size}.")  # fmt: skip
        notes = found[0][0]
        self.slot_width = buckets + 16 + (NOTE_SLOT_WIDTH if notes else 0)
        self.state_width = self.w2 * (5 if notes else 4)  # the tile flags (and the visited plane)
        self.dialog_width = 4 if notes else 3
        facts = size - self.w2 * buckets - self.state_width - slots * self.slot_width - dialog * self.dialog_width
        self.slot = nn.Sequential(nn.Linear(self.slot_width, hidden), nn.Tanh())
        self.glob = nn.Sequential(nn.Linear(self.state_width + hidden + 2 + facts, hidden), nn.Tanh(),
                                  nn.Linear(hidden, hidden), nn.Tanh())  # fmt: skip
        self.slot2 = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.Tanh())
        self.single = nn.Linear(hidden, len(SINGLE))
        self.pair_a = nn.Linear(hidden, len(PAIR) * hidden)
        self.pair_b = nn.Linear(hidden, len(PAIR) * hidden)
        self.choice = nn.Sequential(nn.Linear(self.dialog_width + hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.fixed = nn.Linear(hidden, len(FIXED) + locations)
        self.latent_dim_pi = len(FIXED) + (len(SINGLE) + len(PAIR) * slots) * slots + locations + dialog
        self.latent_dim_vf = hidden

    def _context(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = x.shape[0]
        at = self.w2 * self.b
        state = x[:, at : at + self.state_width]
        at += self.state_width
        rows = x[:, at : at + self.k * self.slot_width].view(n, self.k, self.slot_width)
        at += self.k * self.slot_width
        dialog = x[:, at : at + self.d * self.dialog_width].view(n, self.d, self.dialog_width)
        facts = x[:, at + self.d * self.dialog_width :]
        present = rows[..., self.b : self.b + 1]  # the first flag: the slot holds an object
        s = self.slot(rows) * present
        pooled = s.sum(1) / present.sum(1).clamp(min=1)
        dial = torch.stack([dialog[..., 0].mean(1), dialog[..., 2].sum(1)], 1)
        g = self.glob(torch.cat([state, pooled, dial, facts], 1))
        return g, torch.cat([s.flatten(1), dialog.flatten(1)], 1)

    def forward_actor(self, x: torch.Tensor) -> torch.Tensor:
        return self._actor(x, *self._context(x))

    def _actor(self, x: torch.Tensor, g: torch.Tensor, packed: torch.Tensor) -> torch.Tensor:
        n, h, k = x.shape[0], self.h, self.k
        s = packed[:, : k * h].view(n, k, h)
        dialog = packed[:, k * h :].view(n, self.d, self.dialog_width)
        e = self.slot2(torch.cat([s, g[:, None].expand(n, k, h)], -1))
        single = self.single(e).transpose(1, 2).reshape(n, -1)  # action-major, as the layout
        qa = self.pair_a(e).view(n, k, len(PAIR), h)
        qb = self.pair_b(e).view(n, k, len(PAIR), h)
        pair = torch.einsum("bikh,bjkh->bkij", qa, qb).reshape(n, -1) / h**0.5
        fixed = self.fixed(g)
        choice = self.choice(torch.cat([dialog, g[:, None].expand(n, self.d, h)], -1)).squeeze(-1)
        return torch.cat([fixed[:, : len(FIXED)], single, pair, fixed[:, len(FIXED) :], choice], 1)

    def forward_critic(self, x: torch.Tensor) -> torch.Tensor:
        return self._context(x)[0]

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        g, packed = self._context(x)  # once for both heads (SB3 calls this in every update)
        return self._actor(x, g, packed), g


class SlotPolicy(MaskableActorCriticPolicy):  # type: ignore[misc]
    """MaskablePPO's actor-critic with `SlotHead`: the head's scores are the logits."""

    def __init__(self, *args: Any, head_kwargs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self.head_kwargs = head_kwargs or {}
        kwargs.setdefault("ortho_init", False)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = SlotHead(self.features_dim, **self.head_kwargs)  # type: ignore[assignment]  # duck-typed: SB3 reads latent dims and forward_*

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the head's output already is one logit per action
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)  # type: ignore[call-arg]
