"""Exercise checker of lesson 14b: the solution passes, the stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

from checker_cases import checker_tests

from course import lesson14b

GATES = {"delete_note": True, "send_message": True}

CASES = {
    "gates": (lesson14b.gates, [GATES], [None], [
        [True],  # every tool waits, reading too
        [False],  # no gate at all: the hints' taken away too
        [{"delete_note": True}],  # the delete, but not the way out
        [{"send_message": True}],  # the way out, trusting delete_note's readOnlyHint
        [["delete_note", "send_message"]],  # a list where a dict goes
        ["delete_note, send_message"],  # the names as one string
        [{"notes_delete_note": True, "notes_send_message": True}],  # names with a prefix this server doesn't get
        [{**GATES, "read_note": True}],  # and reading waits too
        [{**GATES, "search_notes": True}],  # and searching waits too
        [{"delete_note": True, "send_message": False}],  # the way out explicitly ungated
        [{"delete_note": True, "send_message": lambda call: "evil" in call.to}],  # a denylist of one address
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_the_messages_name_the_tool_and_the_reason():
    assert "hints can only add a gate" in lesson14b.gates({"send_message": True}).message
    assert "way out" in lesson14b.gates({"delete_note": True}).message
    assert "gate the tools that act" in lesson14b.gates(True).message
    assert "has no tool 'notes_delete_note'" in lesson14b.gates({"notes_delete_note": True}).message
    assert "takes True or False" in lesson14b.gates(["delete_note"]).message
