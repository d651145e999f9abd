"""Chapter 10 (the teaching lab): the checks of its seven exercises, against a sealed answer key.

A check compares a student's answers with the lab's answer key, ``ANSWER_KEY``, which holds no answer.
For each answer it holds salted hashes of the right value written at the precision the exercise asks
for: a number rounded to the decimals the exercise states, a whole number, True or False, a side's
name, a set of rules as one statement per rule. The check writes the student's answer the same way,
hashes it and looks it up. Each answer gets ✓, or ✗ with a hint of what was expected (its kind, its
range, its length; never the value), and the answers still missing are counted. A check never raises,
so the notebook goes on whatever it is given.

Each exercise's key is salted with what its answers depend on (the probabilities given, the simulated
posts, the seed), so a check also says when it is handed other inputs than the key was made for. The
hashes are slow on purpose (PBKDF2): checking a notebook's answers takes a moment, and trying every
candidate value takes much longer than working the exercise out.

This module imports only the standard library and numpy: the student's notebook holds its source as
its checks cell and the key as a literal in the next one; on the book's page the key is computed as the
lab runs.
"""

import hashlib
import math
import re

import numpy as np

__all__ = ["ANSWER_KEY", "DECIMALS", "RULES", "SIDES", "Expect", "check_exercise_1", "check_exercise_2",
           "check_exercise_3", "check_exercise_4", "check_exercise_5", "check_exercise_6", "check_exercise_7",
           "digest", "expect_1", "expect_2", "expect_3", "expect_4", "expect_5", "expect_6", "expect_7",
           "fingerprint_1", "fingerprint_2", "fingerprint_3", "fingerprint_4", "fingerprint_5", "fingerprint_6",
           "fingerprint_7", "salt_of", "written"]

RULES = ["majority_vote", "soft_vote", "tef_without_entropy", "tef"]  # fuse_many's
SIDES = ["change", "stability"]  # the two sides of a MIND dimension
READ_RULES = ["majority_vote", "soft_vote", "tef"]  # exercise 7's
#: The decimals each exercise asks its numbers to (exercises 3, 4's count and 7 ask for whole numbers or names).
DECIMALS = {"exercise 1": 2, "exercise 2": 2, "exercise 4": 2, "exercise 5": 2, "exercise 6": 3}
#: Exercise -> its sealed answers {"for": what they were computed for, "salt": ..., "answers": {name: hashes}}.
#: An entry that is a function is called on first use (the book's page computes its key as the lab runs).
ANSWER_KEY: dict = {}
ROUNDS = 2000  # PBKDF2 rounds per hash
LOG2 = math.log(2)
#: The tables' short name of each rule, as the ✓ and ✗ lines print it.
RULE_NAMES = {"majority_vote": "MV", "soft_vote": "SV", "tef_without_entropy": "log-odds sum", "tef": "TEF"}


class Off:
    """An answer that cannot be compared (a wrong type, shape or range), with the hint to print."""

    def __init__(self, shown: str, hint: str) -> None:
        self.shown, self.hint = shown, hint


class Expect:
    """What one answer must be: its kind, its precision, the range any answer of its kind lies in, and a hint.

    ``kind`` is ``"number"`` (compared at ``decimals``), ``"whole"``, ``"bool"``, ``"side"`` or ``"rules"``
    (a set of rule names); ``low`` and ``high`` bound every possible answer (``bounds`` says them in words),
    so that an answer outside them gets a direction, not only a ✗.
    """

    def __init__(self, kind: str, hint: str, decimals: int = 0, low: float = -math.inf, high: float = math.inf,
                 bounds: str = "") -> None:
        self.kind, self.hint, self.decimals, self.low, self.high, self.bounds = kind, hint, decimals, low, high, bounds

    @property
    def step(self) -> float:
        """One unit of the last decimal compared (1 for a whole number)."""
        return 10.0 ** -self.decimals if self.kind == "number" else 1.0


def is_number(x: object) -> bool:
    """A real number, not a bool."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def shown(x: object) -> str:
    """An answer as the ✓ and ✗ lines print it.

    Examples
    --------
    >>> shown(0.371234), shown("change"), shown(Off("a list of 4", "expected 5"))
    ('0.3712', "'change'", 'a list of 4')
    """
    if isinstance(x, Off):
        return x.shown
    return f"{x:.4g}" if isinstance(x, (float, np.floating)) else repr(x)


def plain(x: object) -> str:
    """A checked answer as its ✓ or ✗ line prints it: a name as text, a set of rules by the tables' names.

    Examples
    --------
    >>> plain("change"), plain({"tef", "majority_vote"}), plain(set()), plain(0.371234)
    ('change', 'MV, TEF', 'none', '0.3712')
    """
    if isinstance(x, str):
        return x
    if isinstance(x, (set, frozenset)) and set(x) <= set(RULES):
        return ", ".join(RULE_NAMES[r] for r in RULES if r in x) or "none"
    return shown(x)


def plain_name(name: str) -> str:
    """An answer's name as its ✓ or ✗ line prints it, each rule by the tables' name.

    Examples
    --------
    >>> plain_name("tef_without_entropy at T = 0.25"), plain_name("en-single-50, majority_vote")
    ('log-odds sum at T = 0.25', 'en-single-50, MV')
    """
    return re.sub(r"\b(" + "|".join(sorted(RULE_NAMES, key=len, reverse=True)) + r")\b",
                  lambda m: RULE_NAMES[m.group(1)], name)


def _in_range(x: float, expect: Expect) -> Off | None:
    """A ✗ with a direction when ``x`` lies outside what any answer of its kind can be (a number gets one unit
    of its last decimal of slack, for its rounding)."""
    slack = expect.step if expect.kind == "number" else 0.0
    if x < expect.low - slack or x > expect.high + slack:
        side = "too low" if x < expect.low else "too high"
        return Off(shown(x), f"{side}: {expect.bounds}" + (f"; {expect.hint}" if expect.hint else ""))
    return None


def written(expect: Expect, x: object) -> str | list[str] | Off:
    """An answer written as its key's hashes read it, or why it cannot be compared.

    A number is rounded to the expected decimals (``-0.00`` is ``0.00``); a set of rules becomes one
    statement per rule, ``'<rule> in'`` or ``'<rule> out'``.

    Examples
    --------
    >>> written(Expect("number", "", 2), 0.4449), written(Expect("number", "", 2), -0.001)
    ('0.44', '0.00')
    >>> written(Expect("whole", "", low=1), 3.0), written(Expect("rules", ""), {"tef"})[-1]
    ('3', 'tef in')
    >>> written(Expect("number", "", 2), "0.7").hint
    'expected a number, not str'
    """
    hint = f" ({expect.hint})" if expect.hint else ""
    if expect.kind == "bool":
        return str(bool(x)) if isinstance(x, (bool, np.bool_)) else Off(shown(x), "expected True or False")
    if expect.kind == "side":
        if not isinstance(x, str):
            return Off(shown(x), f"expected a side's name, a string such as {SIDES[0]!r}")
        if x not in SIDES:
            return Off(shown(x), f"unknown side {x!r}: the sides are {', '.join(map(repr, SIDES))}")
        return x
    if expect.kind == "rules":
        if not isinstance(x, (set, frozenset)):
            return Off(shown(x), "expected a set of rule names, such as {'soft_vote'}")
        unknown = sorted(map(repr, set(x) - set(RULES)))
        if unknown:
            return Off(shown(x), f"unknown names {', '.join(unknown)}: the rules are {', '.join(RULES)}")
        return [f"{rule} {'in' if rule in x else 'out'}" for rule in RULES]
    if not is_number(x):
        return Off(shown(x), f"expected a number, not {type(x).__name__}{hint}")
    if not np.isfinite(x):
        return Off(shown(x), "expected a finite number")
    off = _in_range(float(x), expect)
    if off is not None:
        return off
    if expect.kind == "whole":
        return str(int(x)) if float(x).is_integer() else Off(shown(x), f"expected a whole number{hint}")
    text = f"{float(x):.{expect.decimals}f}"
    return text.lstrip("-") if float(text) == 0 else text


def salt_of(exercise: str, fingerprint: str) -> str:
    """The salt of an exercise's hashes: it changes with the inputs its answers depend on.

    Examples
    --------
    >>> salt_of("exercise 3", "strong = 0.9, weak = 0.4") == salt_of("exercise 3", "strong = 0.8, weak = 0.4")
    False
    """
    return hashlib.sha256(f"{exercise}|{fingerprint}".encode()).hexdigest()[:16]


def digest(salt: str, name: str, text: str) -> str:
    """The hash of one answer, written (:func:`written`), under its name and its exercise's salt.

    Examples
    --------
    >>> len(digest("abc", "H", "0.37")), digest("abc", "H", "0.37") == digest("abc", "w", "0.37")
    (20, False)
    """
    return hashlib.pbkdf2_hmac("sha256", f"{name}={text}".encode(), salt.encode(), ROUNDS).hex()[:20]


def verdict(mine: object, expect: Expect, name: str, salt: str, hashes: list) -> tuple[bool, str]:
    """Whether an answer is right and, if not, what was expected (never the value).

    Examples
    --------
    >>> e = Expect("number", "in nats", 2, 0, LOG2, "between 0 and log 2")
    >>> ok = [digest("s", "H", "0.37")]
    >>> verdict(0.3712, e, "H", "s", ok), verdict(0.8, e, "H", "s", ok)[1]
    ((True, ''), 'too high: between 0 and log 2; in nats')
    >>> verdict(0.5, e, "H", "s", ok)
    (False, 'not the value, compared to 2 decimals; in nats')
    """
    text = written(expect, mine)
    if isinstance(text, Off):
        return False, text.hint
    if isinstance(text, list):  # a set of rules: one statement per rule
        wrong = [t for t in text if digest(salt, name, t) not in hashes]
        if not wrong:
            return True, ""
        extra = any(t.endswith(" in") for t in wrong)
        return False, ("a rule in it does move" if extra else "a rule is missing") + \
            (f" ({expect.hint})" if expect.hint else "")
    if digest(salt, name, text) in hashes:
        return True, ""
    precision = f", compared to {expect.decimals} decimals" if expect.kind == "number" else ""
    return False, f"not the value{precision}" + (f"; {expect.hint}" if expect.hint else "")


def entries(mine: object, keys: list, what: str) -> tuple[dict, list[tuple[str, str, str]]]:
    """The answers a dict gives for ``keys``, and a ✗ line for what else it holds (or for a non-dict).

    Examples
    --------
    >>> entries({0.5: 0.37, "0.9": 0.58}, [0.5, 0.9], "my_H")
    ({0.5: 0.37}, [("my_H['0.9']", '0.58',
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


def sealed(exercise: str, fingerprint: str) -> dict | str:
    """An exercise's key, or why these answers cannot be checked (the key is for other inputs)."""
    key = ANSWER_KEY.get(exercise)
    if callable(key):
        key = ANSWER_KEY[exercise] = key()
    if not isinstance(key, dict):
        return f"this notebook holds no answer key for {exercise}: run the cell after the checks first"
    if key["salt"] != salt_of(exercise, fingerprint):
        return f"other inputs: the answer key is for {key['for']}; set them back to check your answers"
    return key


def check(answers: dict, exercise: str, fingerprint: str, expects: dict, problems: list | tuple = ()) -> bool | None:
    """✓ or ✗ per answer given; False if one is off, None while some are missing, True when all are right.

    Examples
    --------
    >>> ANSWER_KEY["demo"] = {"for": "a demo", "salt": salt_of("demo", ""),
    ...                       "answers": {"a": [digest(salt_of("demo", ""), "a", "1")]}}
    >>> check({"a": 1, "b": None}, "demo", "", {"a": Expect("whole", ""), "b": Expect("whole", "")})
    ✓ a: 1
    · 1 of 2 answers still missing (replace the None)
    >>> check({"a": 2}, "demo", "", {"a": Expect("whole", "a count")})
    ✗ a: 2: not the value; a count
    False
    >>> check({"a": 1}, "demo", "other", {"a": Expect("whole", "")})
    ✗ demo: other inputs: the answer key is for a demo; set them back to check your answers
    False
    >>> del ANSWER_KEY["demo"]
    """
    key = sealed(exercise, fingerprint)
    if isinstance(key, str):
        print(f"✗ {exercise}: {key}")
        return False
    verdicts = []
    for name, mine, hint in problems:
        print(f"✗ {name}: {mine}: {hint}")
        verdicts.append(False)
    given = 0
    for name, expect in expects.items():
        mine = answers.get(name)
        if mine is None:
            continue
        given += 1
        ok, hint = verdict(mine, expect, name, key["salt"], key["answers"].get(name, []))
        print(f"{'✓' if ok else '✗'} {plain_name(name)}: {plain(mine)}" + ("" if ok else f": {hint}"))
        verdicts.append(ok)
    missing = len(expects) - given
    if missing:
        print(f"· {missing} of {len(expects)} answers still missing (replace the None)")
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
QUANTITIES_1 = {"H": "my_H", "w": "my_w", "ℓ": "my_l", "w·ℓ": "my_wl"}


def expect_1() -> dict:
    """Exercise 1's answers: H, w, ℓ and w·ℓ at each p, to two decimals."""
    d, p_half = DECIMALS["exercise 1"], "not negative for p ≥ 1/2"
    kinds = {"H": Expect("number", "the entropy in nats, natural logarithms", d, 0, LOG2, "between 0 and log 2"),
             "w": Expect("number", "1 - H/log 2", d, 0, 1, "a weight lies between 0 and 1"),
             "ℓ": Expect("number", "log(p / (1 - p)) with the natural logarithm", d, 0, bounds=p_half),
             "w·ℓ": Expect("number", "the product of w and ℓ at that p", d, 0, bounds=p_half)}
    return {f"{q}({p})": e for q, e in kinds.items() for p in P_GIVEN}


def fingerprint_1() -> str:
    """What exercise 1's answers depend on."""
    return "p = " + ", ".join(map(str, P_GIVEN))


@never_stops
def check_exercise_1(H: dict, w: dict, l: dict, wl: dict) -> bool | None:
    """Entropy (nats), weight, log-odds and tempered evidence at each p, as dicts {p: value}, to two decimals."""
    answers, problems = {}, []
    for (q, what), mine in zip(QUANTITIES_1.items(), (H, w, l, wl)):
        given, bad = entries(mine, P_GIVEN, what)
        problems += bad
        answers |= {f"{q}({p})": given.get(p) for p in P_GIVEN}
    return check(answers, "exercise 1", fingerprint_1(), expect_1(), problems)


def expect_2() -> dict:
    """Exercise 2's answers: the grid's properties of w, and c, to two decimals."""
    d, unit = DECIMALS["exercise 2"], "a weight lies between 0 and 1"
    return {"min w": Expect("number", "", d, 0, 1, unit), "max w": Expect("number", "", d, 0, 1, unit),
            "max |w(p) - w(1 - p)|": Expect("number", "", d, 0, 1, "a difference of two weights, from 0 to 1"),
            "w increases on [1/2, 1]": Expect("bool", "compare neighbouring points of the grid's upper half"),
            "c": Expect("number", "from the second derivative of H at 1/2 (or a fit near 1/2)", d, 0,
                        bounds="w grows away from 1/2, so c is positive")}


def fingerprint_2() -> str:
    """What exercise 2's answers depend on."""
    return "1,001 points of [0, 1]"


@never_stops
def check_exercise_2(answers: dict) -> bool | None:
    """Properties of w on 1,001 points of [0, 1], and the c of w(1/2 + δ) ≈ c δ², as a dict, to two decimals."""
    given, problems = entries(answers, list(expect_2()), "my_properties")
    return check(given, "exercise 2", fingerprint_2(), expect_2(), problems)


def expect_3() -> dict:
    """Exercise 3's answers: a whole number per rule."""
    return dict.fromkeys(RULES, Expect("whole", "the smallest whole n that turns the post (mind the ties)", low=1,
                                       bounds="the decisive sentence alone decides change, so n is at least 1"))


def fingerprint_3(strong: float, weak: float) -> str:
    """What exercise 3's answers depend on."""
    return f"strong = {float(strong)!r}, weak = {float(weak)!r}"


@never_stops
def check_exercise_3(first_n: dict, strong: float, weak: float) -> bool | None:
    """The smallest n for which `strong` followed by n `weak` sentences is stability, per rule (a dict)."""
    fingerprint = fingerprint_3(strong, weak)
    given, problems = entries(first_n, RULES, "my_first_n")
    return check(given, "exercise 3", fingerprint, expect_3(), problems)


def expect_4(posts: int) -> dict:
    """Exercise 4's answers: a count of posts, and two shares to two decimals."""
    share = Expect("number", "a share between 0 and 1 of the posts where the two rules disagree",
                   DECIMALS["exercise 4"], 0, 1, "a share lies between 0 and 1")
    return {"disagreements": Expect("whole", "a count of posts", low=0, high=posts,
                                    bounds=f"a count of the {posts:,} posts"),
            "majority_vote": share, "tef": share}


def fingerprint_4(corpus: object) -> str:
    """What exercise 4's answers depend on: the simulated posts (their sides, sentences and probabilities)."""
    parts = (" ".join(map(str, corpus.y)), np.asarray(corpus.doc_index).tobytes(),
             " ".join(f"{x:.6f}" for x in np.asarray(corpus.p, dtype=float)))
    return hashlib.sha256(b"|".join(x if isinstance(x, bytes) else x.encode() for x in parts)).hexdigest()


@never_stops
def check_exercise_4(corpus: object, disagreements: int | None, right: dict) -> bool | None:
    """The number of posts MV and TEF decide differently, and the share (0 to 1, to two decimals) each gets
    right there."""
    fingerprint = fingerprint_4(corpus)
    given, problems = entries(right, ["majority_vote", "tef"], "my_right")
    return check({"disagreements": disagreements} | given, "exercise 4", fingerprint, expect_4(len(corpus.y)),
                 problems)


def expect_5(temperatures: list) -> dict:
    """Exercise 5's answers: each rule's accuracy at each T, to two decimals, and the set of rules that stay put."""
    accuracy = Expect("number", "an accuracy in percent, from 0 to 100", DECIMALS["exercise 5"], 0, 100,
                      "an accuracy in percent lies between 0 and 100")
    return {f"{r} at T = {t:g}": accuracy for r in RULES for t in temperatures} | {
        "unchanged": Expect("rules", "which rules read only signs, or a sum whose sign a temperature cannot change?")}


def fingerprint_5(temperatures: list, n: int, seed: int) -> str:
    """What exercise 5's answers depend on."""
    return f"T = {', '.join(f'{float(t):g}' for t in temperatures)}; n_posts = {int(n)}; seed = {int(seed)}"


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
    """Accuracy (%, to two decimals) of each rule at each T (a dict of lists), and the set of rules whose
    accuracy stays put."""
    fingerprint = fingerprint_5(temperatures, n, seed)
    given, problems = entries(accuracy, RULES, "my_accuracy")
    expects, answers = expect_5(temperatures), {"unchanged": unchanged}
    for r in RULES:
        mine, bad = accuracies(given.get(r), r, len(temperatures))
        problems += bad
        if bad:  # a list of the wrong length is one ✗, never checked against the other rules' keys
            expects = {k: e for k, e in expects.items() if not k.startswith(f"{r} at T = ")}
        answers |= {f"{r} at T = {t:g}": value for t, value in zip(temperatures, mine)}
    return check(answers, "exercise 5", fingerprint, expects, problems)


ESTIMATES_6 = ["exact soft", "exact hard", "plug-in hard", "plug-in soft (4 bins)", "plug-in soft (16 bins)",
               "plug-in soft (64 bins)"]


def expect_6() -> dict:
    """Exercise 6's answers: six informations in nats, to three decimals."""
    return dict.fromkeys(ESTIMATES_6, Expect("number", "in nats (natural logarithms)", DECIMALS["exercise 6"], 0,
                                             LOG2, "the information about a side lies between 0 and log 2"))


def fingerprint_6(n: int, seed: int) -> str:
    """What exercise 6's answers depend on."""
    return f"n_posts = {int(n)}; seed = {int(seed)}"


@never_stops
def check_exercise_6(answers: dict, n: int, seed: int) -> bool | None:
    """Exact and plug-in information (nats, to three decimals) of a sentence of strength 1, as a dict."""
    fingerprint = fingerprint_6(n, seed)
    given, problems = entries(answers, ESTIMATES_6, "my_estimates")
    return check(given, "exercise 6", fingerprint, expect_6(), problems)


HINTS_7 = {"majority_vote": "count the sentences on each side of 1/2 (a tie goes to the first sentence's side)",
           "soft_vote": "average p(change) over the sentences and compare the mean with 1/2",
           "tef": "add up w(p)·ℓ(p): a sentence near 1/2 weighs almost nothing, a confident one a lot"}


def expect_7(posts: list) -> dict:
    """Exercise 7's answers: a side per post and rule."""
    return {f"{post}, {rule}": Expect("side", HINTS_7[rule]) for post in posts for rule in READ_RULES}


def fingerprint_7(judged: dict) -> str:
    """What exercise 7's answers depend on: each post's sentence probabilities, {(post, dimension): [p, ...]}."""
    return "; ".join(f"{post} {dimension}: " + ", ".join(f"{float(x):.4f}" for x in p)
                     for (post, dimension), p in judged.items())


@never_stops
def check_exercise_7(decisions: dict, views: dict) -> bool | None:
    """The side MV, SV and TEF decide for each post, as a dict {post id: {rule: 'change' or 'stability'}}."""
    fingerprint = fingerprint_7({post: view["p_change"] for post, view in views.items()})
    posts = [post for post, _ in views]
    given, problems = entries({} if decisions is None else decisions, posts, "my_decisions")
    answers = {}
    for post in posts:
        mine, bad = entries(given.get(post), READ_RULES, f"my_decisions[{post!r}]")
        problems += bad
        answers |= {f"{post}, {rule}": mine.get(rule) for rule in READ_RULES}
    return check(answers, "exercise 7", fingerprint, expect_7(posts), problems)
