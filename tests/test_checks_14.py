"""Exercise checker of lesson 14: the solution passes, the stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

from checker_cases import boom, checker_tests, stub

from course import lesson14

SIGNS = ("<important>", "ignore previous", "do not tell", "don't tell", "忽略", "不要告诉")


def careful(listing):
    seen = listing.text.lower()
    return not any(sign in seen for sign in SIGNS) and "\\u" not in seen


def names_only(listing):  # looks at the names, which are harmless
    return not any("passwords" in name or "important" in name.lower() for name in listing.names)


def case_sensitive(listing):  # the tag as --poisoned writes it, and nothing else
    return all("<IMPORTANT>" not in (t.get("description") or "") for t in listing.tools)


def descriptions_only(listing):  # every sign, in any case, but never a parameter's description
    return not any(sign in (t.get("description") or "").lower() for t in listing.tools for sign in SIGNS)


def english_only(listing):
    seen = listing.text.lower()
    return not any(sign in seen for sign in SIGNS[:4]) and "\\u" not in seen


def no_invisible_check(listing):  # reads the raw descriptions: the tag letters look like nothing at all
    return not any(sign in listing.text.lower() for sign in SIGNS)


def first_tool_only(listing):
    first = listing.tools[0]
    return not any(sign in str(first).lower() for sign in SIGNS)


def too_broad(listing):  # refuses ordinary words: the time server says "Use 'Asia/Shanghai' ..."
    seen = listing.text.lower()
    return not any(sign in seen for sign in (*SIGNS, "use ", "important")) and "\\u" not in seen


def refuse_all(listing):
    return False


def approve_all(listing):
    return True


def says_no_in_words(listing):  # a string where stdio_tools needs True or False
    return "approved" if careful(listing) else "refused"


def property_keyerror(listing):  # crashes on a tool without parameters
    for t in listing.tools:
        for spec in t["inputSchema"]["properties"].values():
            if any(sign in spec["description"].lower() for sign in SIGNS):
                return False
    return True


CASES = {
    "careful": (lesson14.careful, [careful], [stub], [
        [names_only], [case_sensitive], [descriptions_only], [english_only], [no_invisible_check],
        [first_tool_only], [too_broad], [refuse_all], [approve_all], [says_no_in_words], [property_keyerror], [boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_the_messages_say_what_was_missed_in_the_learners_terms():
    assert "lower case" in lesson14.careful(case_sensitive).message
    assert "parameter" in lesson14.careful(descriptions_only).message
    assert "Chinese" in lesson14.careful(english_only).message
    assert "don't print" in lesson14.careful(no_invisible_check).message
    assert "refused the time server's list" in lesson14.careful(too_broad).message
    assert "not True or False" in lesson14.careful(says_no_in_words).message
    assert "KeyError" in lesson14.careful(property_keyerror).message


def test_undated_masks_what_changes_from_day_to_day():
    said = lesson14.undated("16:30 in Shanghai is 17:30 in Tokyo (2026-12-02, Wednesday; 2026年12月2日 星期三)")
    assert "2026" not in said and "Wednesday" not in said and "星期三" not in said and "17:30" in said
