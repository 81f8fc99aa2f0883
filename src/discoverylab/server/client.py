"""A small synchronous client of `discoverylab env-serve` (one session per client object).

    with EnvServerClient("http://127.0.0.1:8000") as env:
        first = env.reset("PickAndPlaceTest", "normal", seed=0)
        result = env.step({"action": "MOVE_DIRECTION", "arg1": "north"})
"""

from __future__ import annotations

from typing import Any

import httpx

from discoverylab.server.session import StepResult


class EnvServerError(RuntimeError):
    """The server refused a request; `status` is its HTTP status and the message its reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"env server answered {status}: {message}")
        self.status = status


class EnvServerClient:
    """One session on an env server: reset, step, state, close."""

    def __init__(self, base_url: str, timeout: float = 60.0, client: httpx.Client | None = None) -> None:
        self.http = client or httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout)
        self.session_id: str | None = None

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        answer = self.http.request(method, path, json=body)
        if answer.status_code >= 400:
            try:
                detail = answer.json().get("detail", answer.text)
            except ValueError:
                detail = answer.text
            raise EnvServerError(answer.status_code, str(detail))
        return answer.json()

    def open(self) -> str:
        if self.session_id is None:
            self.session_id = str(self._call("POST", "/sessions")["session_id"])
        return self.session_id

    def reset(self, task: str, difficulty: str = "normal", seed: int | None = None, *, split: str | None = None,
              index: int | None = None, **options: Any) -> StepResult:  # fmt: skip
        """Start an episode of `seed`, or of `split` + `index` (options: text_format, max_steps, structured,
        agent, episode_id)."""
        body = {"task": task, "difficulty": difficulty, "seed": seed, "split": split, "index": index, **options}
        return StepResult(**self._call("POST", f"/sessions/{self.open()}/reset", body))

    def step(self, action: dict[str, Any] | str) -> StepResult:
        return StepResult(**self._call("POST", f"/sessions/{self.open()}/step", {"action": action}))

    def answer_sheet(self) -> dict[str, Any] | None:
        """The task's answer sheet (fields, options, JSON schema), or None (no sheet)."""
        sheet = self._call("GET", f"/sessions/{self.open()}/answer_sheet")["answer_sheet"]
        return dict(sheet) if sheet is not None else None

    def hand_in(self, answers: dict[str, Any], knowledge: str | None = None) -> dict[str, Any]:
        """Hand in the filled sheet once the episode ended (with the agent's knowledge report, if
        any: a server run with --out keeps it for `discoverylab judge`); returns its grade, or for
        a sealed test instance a receipt (`received`, `fields_submitted`, the form's `errors`):
        that grade is the evaluator's (`env-serve --out`), never the client's."""
        body: dict[str, Any] = {"answers": answers} | ({"knowledge": knowledge} if knowledge is not None else {})
        return dict(self._call("POST", f"/sessions/{self.open()}/answers", body))

    def state(self) -> dict[str, Any]:
        return dict(self._call("GET", f"/sessions/{self.open()}/state"))

    def close(self) -> None:
        if self.session_id is not None:
            sid, self.session_id = self.session_id, None
            try:
                self._call("DELETE", f"/sessions/{sid}")
            except (EnvServerError, httpx.HTTPError):
                pass  # already expired or the server is gone: nothing left to free
        self.http.close()

    def __enter__(self) -> EnvServerClient:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()
