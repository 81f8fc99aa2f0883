"""Generate the answer-sheet reference (docs/answer_sheets.md) from the forms themselves."""

from __future__ import annotations

from discoverylab.scenarios.answer_forms import ANSWER_MODULES, answer_form
from discoverylab.scenarios.registry import get_task
from discoverylab.scoring.answer_sheet import Choice, Field, Number, Numbers
from discoverylab.world.world import World

HEADER = """# Answer sheets

Generated from the forms by `discoverylab docs` — do not edit by hand. The gold meanings are
spoilers of the mechanics (not of any seed's answer).

Beyond the paper: every discovery task (8 themes x Easy/Normal/Challenge) ends with a small typed
answer sheet, graded exactly with no LLM and reported beside the judged knowledge score (record
fields `answers`, `answers_score`, `answers_grade`; the `answers` column of `discoverylab report`).
One value per field: a list, an "A or B" string or a range where one value is asked is invalid
and scores 0 for that field. The sheet's score is the fraction of its fields answered right.

- **choice**: one option of the list the form gives (case and spacing do not matter). Lists are
  every option the difficulty can ask (sorted, or a fixed order) or the instance's own candidates
  where the first observation shows them (sorted; shown here for seed 0): Proteomics Easy's three
  species, Lost in Translation Easy's five objects on the store's tables. Reactor Lab Easy asks
  no property: its room holds the critical instrument alone, which names it.
- **number**: right iff |answer - gold| < max(abs, rel x |gold|): the bounds are exclusive.
- **numbers**: exactly that many numbers, each within its tolerance; proportions (`scale-free`)
  are compared after dividing by their sum (2:2:4 is 1:1:2).

**Chance** is the expected score of the best blind answer: the probability that a fixed answer is
right (1/options for a balanced choice; for numbers, the share of seeds the densest tolerance band
of the prior holds). No fixed, copied or random sheet can expect more; `tests/test_answer_sheet.py`
checks each (`test_attack_fixed_answer_sheet_*`, `test_attack_random_answer_sheet_at_chance`), and
`tests/attacks/test_attacks_combined.py` checks priors learnt from public instances combined with
probes of the first observation (the options it names, the nearest public instance's answer, a
scaled reading) on sealed test instances.
A form's chance is the mean of its fields'.

Agents fill the sheet after the episode through `answer_sheet(form) -> dict` (oracles from their
knowledge report's facts, the random agent uniformly, LLM agents in a final prompt constrained
to `form.json_schema()`). Integrations and the UI: `discoverylab.scenarios.answer_forms.answer_form(env)`
(public: `form.text()` for people, `form.json_schema()` for structured output) and
`grade_answers(env, answers)` once the episode has ended (`reveal=True` for evaluators before).
`discoverylab play` asks a human player for the sheet when the session ends.
"""


def _type(f: Field) -> str:
    kind = f.kind
    if isinstance(kind, Choice):
        return "choice: " + ", ".join(f"`{o}`" for o in kind.options)
    if isinstance(kind, Number):
        return f"number ({kind.unit or 'no unit'}), {kind.tolerance.describe()}"
    assert isinstance(kind, Numbers)
    tol = "; ".join(t.describe() for t in kind.tolerances) if isinstance(kind.tolerance, tuple) else kind.tolerance.describe()
    scale = ", scale-free" if kind.scale_free else ""
    return f"{kind.length} number{'s' if kind.length > 1 else ''}{scale}, {tol}"


def answer_sheets_markdown() -> str:
    lines = [HEADER, "| task | difficulty | field | type | question | gold | chance |", "|---|---|---|---|---|---|---:|"]
    totals = []
    for task in ANSWER_MODULES:
        cls = get_task(task)
        for difficulty in cls.difficulties:
            world = World(0)
            form = answer_form(cls(world, difficulty))
            world.dispose()
            for f in form.fields:
                lines.append(f"| {task} | {difficulty} | `{f.name}` | {_type(f)} | {f.question} | {f.gold_meaning} | "
                             f"{f.chance_score:.3g} |")  # fmt: skip
            totals.append(f"| {task} | {difficulty} | {len(form.fields)} | {form.chance:.3g} |"
                          + (" conditions in either order |" if form.unordered else " |"))  # fmt: skip
    lines += ["", "## Chance per form", "", "| task | difficulty | fields | chance | note |", "|---|---|---:|---:|---|",
              *totals, ""]  # fmt: skip
    return "\n".join(lines)
