"""Chapter 10 (the teaching lab): the checks of its seven exercises.

Each check computes the right answers with tefcore and compares a student's: each answer given gets ✓, or
✗ with a hint of what was expected (its kind, its range, too high or too low; never the answer itself), and
the answers still missing are counted. A check never raises, so the notebook goes on whatever it is given.

The student's notebook holds this module's source as its checks cell, so the module imports only the
standard library, numpy and tefcore (never the book), and defines what it uses itself.
"""

import numpy as np

from tefcore import information
from tefcore import simulate as sim
from tefcore.fusion import CLASSES, clipped_log_odds, entropy_weight, fuse_many

__all__ = ["READ_RULES", "RULES", "SIDES", "check", "check_exercise_1", "check_exercise_2", "check_exercise_3",
           "check_exercise_4", "check_exercise_5", "check_exercise_6", "check_exercise_7"]

RULES = ["majority_vote", "soft_vote", "tef_without_entropy", "tef"]  # fuse_many's
SIDES = list(CLASSES)  # the two sides of a MIND dimension


class Off:
    """An answer that cannot be compared (a wrong type or shape), with the hint to print."""

    def __init__(self, shown: str, hint: str) -> None:
        self.shown, self.hint = shown, hint


def is_number(x: object) -> bool:
    """A real number, not a bool."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def shown(x: object) -> str:
    """An answer as the ✓ and ✗ lines print it.

    Examples
    --------
    >>> shown(0.693147), shown("change"), shown(Off("a list of 4", "expected 5"))
    ('0.6931', "'change'", 'a list of 4')
    """
    if isinstance(x, Off):
        return x.shown
    return f"{x:.4g}" if isinstance(x, (float, np.floating)) else repr(x)


def verdict(mine: object, right: object, tol: float, hint: str) -> tuple[bool, str]:
    """Whether an answer is right and, if not, what was expected.

    Examples
    --------
    >>> verdict(0.70, 0.693, 0.01, ""), verdict(0.8, 0.693, 0.01, "in nats")
    ((True, ''), (False, 'too high (to within 0.01); in nats'))
    >>> verdict("0.7", 0.693, 0.01, "")
    (False, 'expected a number, not str')
    """
    if isinstance(mine, Off):
        return False, mine.hint
    if isinstance(right, (bool, np.bool_)):
        if not isinstance(mine, (bool, np.bool_)):
            return False, "expected True or False"
        return bool(mine) == bool(right), hint or "check it again"
    if isinstance(right, (set, frozenset)):
        if not isinstance(mine, (set, frozenset)):
            return False, "expected a set of rule names, such as {'soft_vote'}"
        unknown = sorted(map(repr, set(mine) - set(RULES)))
        if unknown:
            return False, f"unknown names {', '.join(unknown)}: the rules are {', '.join(RULES)}"
        extra, lacking = set(mine) - right, right - set(mine)
        return not (extra or lacking), ("a rule in it does move" if extra else "a rule is missing") + \
            (f" ({hint})" if hint else "")
    if isinstance(right, str):
        if not isinstance(mine, str):
            return False, f"expected a side's name, a string such as {SIDES[0]!r}"
        if mine not in SIDES:
            return False, f"unknown side {mine!r}: the sides are {', '.join(map(repr, SIDES))}"
        return mine == right, hint or "check it again"
    if not is_number(mine):
        return False, f"expected a number, not {type(mine).__name__}" + (f" ({hint})" if hint else "")
    if not np.isfinite(mine):
        return False, "expected a finite number"
    if abs(mine - right) <= tol:
        return True, ""
    side = "too high" if mine > right else "too low"
    return False, side + (f" (to within {tol:g})" if tol else "") + (f"; {hint}" if hint else "")


def entries(mine: object, keys: list, what: str) -> tuple[dict, list[tuple[str, str, str]]]:
    """The answers a dict gives for ``keys``, and a ✗ line for what else it holds (or for a non-dict).

    Examples
    --------
    >>> entries({0.5: 0.69, "0.9": 0.33}, [0.5, 0.9], "my_H")
    ({0.5: 0.69}, [("my_H['0.9']", '0.33',
                    'not a key asked for: the keys are 0.5, 0.9 (write them as numbers, without quotes)')])
    """
    if mine is None:
        return {}, []
    names = ", ".join(map(repr, keys))
    if not isinstance(mine, dict):
        return {}, [(what, shown(mine), f"expected a dict of answers with the keys {names}")]
    quotes = " (write them as numbers, without quotes)" if any(is_number(k) for k in keys) else ""
    bad = [(f"{what}[{k!r}]", shown(v), f"not a key asked for: the keys are {names}{quotes}")
           for k, v in mine.items() if k not in keys]
    return {x: mine[x] for x in keys if x in mine}, bad


def check(answers: dict, truth: dict, tol: float = 0.01, hints: dict | None = None,
          problems: list | tuple = ()) -> bool | None:
    """✓ or ✗ per answer given; False if one is off, None while some are missing, True when all are right.

    Examples
    --------
    >>> check({"a": 1.0, "b": None}, {"a": 1.0, "b": 2.0})
    ✓ a: 1
    · 1 of 2 answers still missing (replace the None)
    >>> check({"a": 1.5, "b": 2.0}, {"a": 1.0, "b": 2.0}, hints={"a": "a count"})
    ✗ a: 1.5: too high (to within 0.01); a count
    ✓ b: 2
    False
    """
    verdicts = []
    for key, mine, hint in problems:
        print(f"✗ {key}: {mine}: {hint}")
        verdicts.append(False)
    given = 0
    for key, right in truth.items():
        mine = answers.get(key)
        if mine is None:
            continue
        given += 1
        ok, hint = verdict(mine, right, tol, (hints or {}).get(key, ""))
        print(f"{'✓' if ok else '✗'} {key}: {shown(mine)}" + ("" if ok else f": {hint}"))
        verdicts.append(ok)
    missing = len(truth) - given
    if missing:
        print(f"· {missing} of {len(truth)} answers still missing (replace the None)")
    return False if not all(verdicts) else None if missing else True


def never_stops(check_exercise):  # noqa: ANN001, ANN201 - a decorator of the checks below
    """A check that meets an answer it cannot read says so with ✗, and the notebook goes on."""
    def guarded(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        try:
            return check_exercise(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - a student's answer of any shape
            print(f"✗ the check could not read these answers ({type(exc).__name__}: {exc}); "
                  f"expected: {check_exercise.__doc__}")
            return False
    guarded.__doc__ = check_exercise.__doc__
    return guarded


P_GIVEN = [0.5, 0.6, 0.9, 0.99]  # exercise 1's sentences
HINTS_1 = {"H": "the entropy in nats, between 0 and log 2 ≈ 0.693", "w": "1 - H/log 2, between 0 and 1",
           "ℓ": "log(p / (1 - p)) with the natural logarithm", "w·ℓ": "the product of w and ℓ at that p"}


@never_stops
def check_exercise_1(H: dict, w: dict, l: dict, wl: dict) -> bool | None:
    """Entropy (nats), weight, log-odds and tempered evidence at each p, as dicts {p: value}."""
    truth = {"H": information.binary_entropy(P_GIVEN), "w": entropy_weight(P_GIVEN),
             "ℓ": clipped_log_odds(P_GIVEN)}
    truth["w·ℓ"] = truth["w"] * truth["ℓ"]
    answers, problems, hints = {}, [], {}
    for (name, values), mine, what in zip(truth.items(), (H, w, l, wl), ("my_H", "my_w", "my_l", "my_wl")):
        given, bad = entries(mine, P_GIVEN, what)
        problems += bad
        for q, value in zip(P_GIVEN, values):
            answers[f"{name}({q})"] = given.get(q)
            hints[f"{name}({q})"] = HINTS_1[name]
    right = {f"{name}({q})": v for name, values in truth.items() for q, v in zip(P_GIVEN, values)}
    return check(answers, right, hints=hints, problems=problems)


@never_stops
def check_exercise_2(answers: dict) -> bool | None:
    """Properties of w on 1,001 points of [0, 1], and the c of w(1/2 + δ) ≈ c δ², as a dict."""
    w = entropy_weight(np.linspace(0, 1, 1001))
    truth = {"min w": w.min(), "max w": w.max(), "max |w(p) - w(1 - p)|": np.abs(w - w[::-1]).max(),
             "w increases on [1/2, 1]": bool(np.all(np.diff(w[500:]) > 0)), "c": 2 / np.log(2)}
    given, problems = entries(answers, list(truth), "my_properties")
    hints = {"w increases on [1/2, 1]": "compare neighbouring points of the grid's upper half",
             "c": "from the second derivative of H at 1/2 (or a fit near 1/2)"}
    return check(given, truth, hints=hints, problems=problems)


@never_stops
def check_exercise_3(first_n: dict, strong: float, weak: float) -> bool | None:
    """The smallest n for which `strong` followed by n `weak` sentences is stability, per rule (a dict)."""
    n = np.arange(3001)
    p = np.concatenate([np.r_[strong, np.full(k, weak)] for k in n])
    truth = {r: int(np.argmax(fuse_many(p, np.repeat(n, n + 1), rule=r).prediction == "stability"))
             for r in RULES}
    given, problems = entries(first_n, RULES, "my_first_n")
    hints = dict.fromkeys(RULES, "the smallest whole n that turns the post (mind the ties)")
    return check(given, truth, 0, hints, problems)


@never_stops
def check_exercise_4(corpus: sim.SimulatedCorpus, disagreements: int | None, right: dict) -> bool | None:
    """The number of posts MV and TEF decide differently, and the share (0 to 1) each gets right there."""
    pred = {r: fuse_many(corpus.p, corpus.doc_index, rule=r).prediction for r in ("majority_vote", "tef")}
    differ = pred["majority_vote"] != pred["tef"]
    truth = {"disagreements": int(differ.sum())} | {r: np.mean(v[differ] == corpus.y[differ])
                                                    for r, v in pred.items()}
    given, problems = entries(right, ["majority_vote", "tef"], "my_right")
    hint = "a share between 0 and 1 of the posts where the two rules disagree"
    return check({"disagreements": disagreements} | given, truth, 0.005,
                 {"disagreements": "a count of posts", "majority_vote": hint, "tef": hint}, problems)


def accuracies(mine: object, rule: str, size: int) -> tuple[list, list]:
    """A rule's answers of exercise 5, one per T, or a ✗ line when they are not a list of that length."""
    if mine is None:
        return [None] * size, []
    expected = f"expected a list of {size} accuracies in percent, one per T of sweep"
    if not isinstance(mine, (list, tuple, np.ndarray)) or np.ndim(mine) != 1:
        return [], [(f"my_accuracy[{rule!r}]", shown(mine), expected)]
    if len(mine) != size:
        return [], [(f"my_accuracy[{rule!r}]", f"a list of {len(mine)}", expected)]
    return list(mine), []


@never_stops
def check_exercise_5(accuracy: dict, unchanged: set | None, temperatures: list, n: int,
                     seed: int) -> bool | None:
    """Accuracy (%) of each rule at each T (a dict of lists), and the set of rules whose accuracy stays put."""
    values = {r: [] for r in RULES}
    for t in temperatures:
        c = sim.simulate_documents(n, n_decisive=1, n_uncertain=4, temperature=t, rng=seed)
        for r in RULES:
            values[r].append(100 * np.mean(fuse_many(c.p, c.doc_index, rule=r).prediction == c.y))
    given, problems = entries(accuracy, RULES, "my_accuracy")
    answers, truth = {"unchanged": unchanged}, {}
    for r in RULES:
        mine, bad = accuracies(given.get(r), r, len(temperatures))
        problems += bad
        if not bad:  # a list of the wrong length is one ✗, never checked against the other rules' keys
            for t, right, value in zip(temperatures, values[r], mine):
                answers[f"{r} at T = {t:g}"], truth[f"{r} at T = {t:g}"] = value, right
    truth["unchanged"] = {r for r, v in values.items() if len(set(v)) == 1}
    hints = dict.fromkeys(truth, "an accuracy in percent, from 0 to 100") | {
        "unchanged": "which rules read only signs, or a sum whose sign a temperature cannot change?"}
    return check(answers, truth, 0.01, hints, problems)


@never_stops
def check_exercise_6(answers: dict, n: int, seed: int) -> bool | None:
    """Exact and plug-in information (nats) of a sentence of strength 1, as a dict."""
    exact = sim.gaussian_information(1.0)
    c = sim.simulate_documents(n, n_decisive=1, n_uncertain=0, strength=1.0, rng=seed)
    truth = {"exact soft": exact.soft, "exact hard": exact.hard,
             "plug-in hard": information.mutual_information(c.y, c.p >= 0.5, bins=None)}
    for b in (4, 16, 64):
        truth[f"plug-in soft ({b} bins)"] = information.mutual_information(c.y, c.p, bins=b)
    given, problems = entries(answers, list(truth), "my_estimates")
    return check(given, truth, 0.001, dict.fromkeys(truth, "in nats (natural logarithms)"), problems)


READ_RULES = ["majority_vote", "soft_vote", "tef"]  # exercise 7's
HINTS_7 = {"majority_vote": "count the sentences on each side of 1/2 (a tie goes to the first sentence's side)",
           "soft_vote": "average p(change) over the sentences and compare the mean with 1/2",
           "tef": "add up w(p)·ℓ(p): a sentence near 1/2 weighs almost nothing, a confident one a lot"}


@never_stops
def check_exercise_7(decisions: dict, views: dict) -> bool | None:
    """The side MV, SV and TEF decide for each post, as a dict {post id: {rule: 'change' or 'stability'}}."""
    if decisions is None:
        decisions = {}
    posts = [post for post, _ in views]
    given, problems = entries(decisions, posts, "my_decisions")
    answers, truth, hints = {}, {}, {}
    for (post, _), view in views.items():
        mine, bad = entries(given.get(post), READ_RULES, f"my_decisions[{post!r}]")
        problems += bad
        for rule in READ_RULES:
            key = f"{post}, {rule}"
            answers[key], truth[key], hints[key] = mine.get(rule), str(view[rule].iloc[0]), HINTS_7[rule]
    return check(answers, truth, hints=hints, problems=problems)
