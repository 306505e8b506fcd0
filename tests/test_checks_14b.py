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


READER = {"only": ["search_notes", "read_note"]}
GATE_THE_WAY_OUT = {"requires_approval": {"send_message": True, "delete_note": True}}
READER_CASES = {
    "reader": (lesson14b.reader, [READER], [None], [
        [{}],  # all three legs, as listed
        [GATE_THE_WAY_OUT],  # a gate on the way out: a person asked about the attacker's message
        [{"only": ["read_note"]}],  # searching gone too
        [{"only": ["search_notes", "read_note", "delete_note"]}],  # a reader that can delete
        [{"only": ["search_notes", "read_note", "delete_note"], "requires_approval": {"delete_note": True}}],
        [{"only": ["search_notes", "read_note", "send_message"], "requires_approval": {"send_message": True}}],
        [{"only": "search_notes, read_note"}],  # one string where a list goes
        [{"only": ["search_notes", "read_note", "export_notes"]}],  # a tool this server does not list
        [{"requires_approval": True}],  # everything waits, reading too
        [["search_notes", "read_note"]],  # the list, not the options
        [{"only": ["search_notes", "read_note", "send_message"]}],  # the way out kept, ungated
    ]),
}

test_reader_passes_the_solution, test_reader_says_not_solved_to_the_stub, \
    test_reader_catches_a_wrong_answer_without_raising = checker_tests(READER_CASES)


def test_the_reader_messages_name_the_leg():
    assert "the leg to cut is the way out" in lesson14b.reader({}).message
    assert "take the way out away" in lesson14b.reader(GATE_THE_WAY_OUT).message
    assert "keep search_notes" in lesson14b.reader({"only": ["read_note"]}).message
    assert "has no tool 'export_notes'" in lesson14b.reader({"only": ["read_note", "export_notes"]}).message
    assert lesson14b.reader({**READER, "prefix": "notes_"}).passed
