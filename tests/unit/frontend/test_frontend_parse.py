"""Lexing and parsing details: literals, the lexer hack, annotations, coordinates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from p4switch import ir
from p4switch.frontend import P4Error, P4Warning, compile_file
from p4switch.frontend.parse import parse_int_literal
from p4switch.p4names import anno_strings


@pytest.mark.parametrize(
    ("text", "expected"),
    [("5", (5, None, False)), ("8w0xFF", (255, 8, False)), ("4s3", (3, 4, True)), ("0b1010", (10, None, False)),
     ("0o17", (15, None, False)), ("1_000", (1000, None, False)), ("16w0d10", (10, 16, False))],
    ids=["dec", "hex-width", "signed", "bin", "oct", "underscore", "0d"],
)
def test_integer_literals(text: str, expected: tuple) -> None:
    """Integer literals in all P4 spellings."""
    assert parse_int_literal(text) == expected


def _compile(tmp_path: Path, body: str) -> ir.Program:
    pre = Path(__file__).resolve().parent / "corpus" / "include"
    src = f'#include "{pre}/pre.p4"\ncontrol I(inout h_t h, inout m_t m, inout standard_metadata_t sm) {{\n{body}\n}}\n#include "{pre}/post.p4"\n'
    p = tmp_path / "t.p4"
    p.write_text(src)
    return compile_file(p)


def _apply_stmts(prog: ir.Program) -> list:
    return prog.pipeline["ig"].decl.apply.stmts


def test_shift_right_and_nested_generics(tmp_path: Path) -> None:
    """`>>` is a shift, while `register<bit<32>>` closes two type lists."""
    prog = _compile(tmp_path, "register<bit<32>>(8) r; apply { m.b = m.b >> 2; r.write(0, 32w1); }")
    s = _apply_stmts(prog)[0]
    assert isinstance(s.rhs, ir.BinOp) and s.rhs.op == ">>"


def test_less_than_is_not_a_generic_call(tmp_path: Path) -> None:
    """`a < b` stays a comparison even when followed by `>` later."""
    prog = _compile(tmp_path, "apply { if (m.a < 3 && m.b > 4) { m.a = 1; } }")
    cond = _apply_stmts(prog)[0].cond
    assert cond.op == "&&" and cond.left.op == "<" and cond.right.op == ">"


def test_literals_take_the_width_of_the_other_operand(tmp_path: Path) -> None:
    """An int literal next to bit<16> becomes a bit<16> constant (implicit cast)."""
    prog = _compile(tmp_path, "apply { m.b = m.b + 1; m.a = 300; }")
    s0, s1 = _apply_stmts(prog)
    assert s0.rhs.right == ir.Constant(value=1, type=ir.BitsType(width=16), coord=s0.rhs.right.coord)
    assert s1.rhs.value == 300 % 256 and s1.rhs.type == ir.BitsType(width=8)


def test_constants_are_folded_with_wraparound(tmp_path: Path) -> None:
    """Constant expressions fold with P4 wrap-around."""
    prog = _compile(tmp_path, "apply { m.a = 8w250 + 8w10; m.b = (bit<16>)(8w1 ++ 8w2); }")
    s0, s1 = _apply_stmts(prog)
    assert isinstance(s0.rhs, ir.Constant) and s0.rhs.value == 4
    assert isinstance(s1.rhs, ir.Constant) and s1.rhs.value == 0x0102


def test_call_arguments_are_bound_to_parameter_names(tmp_path: Path) -> None:
    """MethodCall args carry parameter names and directions."""
    prog = _compile(tmp_path, "apply { mark_to_drop(sm); }")
    call = _apply_stmts(prog)[0].call
    assert call.kind == ir.CallKind.EXTERN_FUNCTION
    assert [(a.name, a.direction) for a in call.args] == [("standard_metadata", "inout")]


def test_annotations_are_kept(tmp_path: Path) -> None:
    """@name on tables and keys reaches the IR and control-plane names."""
    prog = _compile(tmp_path, '@name(".global_t") table t { key = { h.eth.dst: exact @name("mac"); } actions = { NoAction; } } apply { t.apply(); }')
    t = prog.pipeline["ig"].decl.locals[0]
    assert t.cp_name == "global_t" and t.keys[0].name == "mac"


def test_syntax_error_points_at_original_file(tmp_path: Path) -> None:
    """Coordinates go back through #include to the user's file."""
    with pytest.raises(P4Error) as info:
        _compile(tmp_path, "apply { m.a = = 1; }")
    assert info.value.coord.file.endswith("t.p4") and info.value.coord.line == 3


def test_type_parameters_are_types_only_inside_their_declaration(tmp_path: Path) -> None:
    """v1model declares Parser<H, M>; a program may still name a variable H or T."""
    prog = _compile(tmp_path, "apply { bit<8> H = 1; bit<8> T = H + 1; m.a = T; }")
    assert _apply_stmts(prog)[2].rhs.name == "T"


def test_generic_functions_are_specialized_per_type(tmp_path: Path) -> None:
    """A generic function is lowered once per set of type arguments."""
    src = (Path(__file__).resolve().parent / "corpus" / "valid" / "control_flow.p4")
    prog = compile_file(src)
    assert sorted(f.uid for f in prog.functions) == ["max16", "pick<bit<16>>", "swap_macs", "ttl_class"]


@pytest.mark.parametrize(
    "body",
    [
        "action a(bit<8> type) { m.a = type; } table t { key = { m.a: exact; } actions = { a; } } apply { t.apply(); }",
        "apply { bit<16> type = m.b; type = type + 16w1; m.b = type; }",
        "action a(bit<8> priority) { m.a = priority; } apply { a(3); }",
        "apply { bit<8> key = 1; bit<8> actions = key; bit<8> entries = actions; bit<8> state = entries; m.a = state; }",
        "action a(bit<8> apply) { m.a = apply + 1; } apply { a(3); }",
        "bit<16> type; apply { type = m.b; m.b = type; }",
    ],
    ids=["action-param-type", "local-type", "param-priority", "key-actions-entries-state", "param-apply",
         "control-local-type"],
)
def test_contextual_keywords_are_names(tmp_path: Path, body: str) -> None:
    """type, priority, key, actions, entries, state and apply name parameters and variables (P4-16 nonTypeName)."""
    assert _compile(tmp_path, body).pipeline["ig"].decl.apply.stmts


def test_type_used_as_a_name_declares_no_type(tmp_path: Path) -> None:
    """`type = m.b;` assigns a variable called type: it does not declare `b` a type name."""
    prog = _compile(tmp_path, "apply { bit<16> type; type = m.b; bit<16> b = type; m.b = b; }")
    assert _apply_stmts(prog)[-1].rhs.name == "b"


def test_table_property_named_priority_is_a_property(tmp_path: Path) -> None:
    """`priority = 5;` in a table is a (here unknown) property, not a syntax error (P4-16 nonTableKwName)."""
    with pytest.warns(P4Warning, match="Unknown table property: priority"):
        _compile(tmp_path, "table t { key = { m.a: exact; } actions = { NoAction; } priority = 5; } apply { t.apply(); }")


def _compile_parser(tmp_path: Path, states: str) -> ir.Program:
    """A program whose parser P has `states` (pre.p4's headers; start extracts h.eth first)."""
    src = ("#include <core.p4>\n#include <v1model.p4>\n"
           "header eth_t { bit<48> dst; bit<48> src; bit<16> type; }\nstruct h_t { eth_t eth; }\nstruct m_t { bit<8> a; }\n"
           "parser P(packet_in pk, out h_t h, inout m_t m, inout standard_metadata_t sm) {\n" + states + "\n}\n"
           "control C(inout h_t h, inout m_t m, inout standard_metadata_t sm) { apply { } }\n"
           "control V(inout h_t h, inout m_t m) { apply { } }\n"
           "control D(packet_out pk, in h_t h) { apply { pk.emit(h.eth); } }\n"
           "V1Switch(P(), V(), C(), C(), V(), D()) main;\n")
    p = tmp_path / "t.p4"
    p.write_text(src)
    return compile_file(p)


@pytest.mark.parametrize(
    ("states", "expected"),
    [("state start { }", [("start", "reject", 0)]),
     ("state start { pk.extract(h.eth); }", [("start", "reject", 1)]),
     ("state start { pk.extract(h.eth); transition select(h.eth.type) { 1: s; default: accept; } }\n"
      "state s { m.a = 1; }", [("start", "", 1), ("s", "reject", 1)])],
    ids=["empty", "after-extract", "reached-by-select"],
)
def test_state_without_transition_goes_to_reject(tmp_path: Path, states: str, expected: list) -> None:
    """A state whose body ends without a transition statement transitions to reject, with p4c's warning."""
    with pytest.warns(P4Warning, match="implicit transition to `reject'"):
        prog = _compile_parser(tmp_path, states)
    got = [(s.name, s.transition.state, len(s.stmts)) for s in prog.pipeline["p"].decl.states]
    assert got == expected


def test_free_form_annotation_body_holds_any_character(tmp_path: Path) -> None:
    """`@note(It's here, $6 by #9)`: any balanced body, apostrophe too; P4Info prints its tokens as p4c does."""
    prog = _compile(tmp_path, "@note(It's here, $6 by #9) table t { key = { m.a: exact; } actions = { NoAction; } }"
                              " apply { t.apply(); }")
    (a,) = prog.pipeline["ig"].decl.locals[0].annotations
    assert (a.name, a.tokens) == ("note", "It ' s here , $ 6 by # 9")
    assert anno_strings((a,)) == ["@note(It ' s here , $ 6 by # 9)"]


def test_character_without_a_token_outside_an_annotation_is_refused(tmp_path: Path) -> None:
    """Outside an annotation's body a character P4 has no token for is still a syntax error."""
    with pytest.raises(P4Error, match="syntax error: unexpected character '\\$'") as info:
        _compile(tmp_path, "apply { m.a = 1 $ 2; }")
    assert info.value.coord.line == 3


@pytest.mark.parametrize(
    ("anno", "args", "keys"),
    [('@A[1, "two", true, 1 == 2, 5 + 6, -3]', (1, "two", True, False, 11, -3), ()),
     ('@A[label="x", n=2 * 3, on=!false,]', ("x", 6, True), ("label", "n", "on")),
     ("@A[]", (), ())],
    ids=["expressions", "key-values", "empty"],
)
def test_structured_annotation_values_are_folded(tmp_path: Path, anno: str, args: tuple, keys: tuple) -> None:
    """`@A[...]` (P4-16 structured annotations): expression or key=value lists, folded to P4Info's values."""
    prog = _compile(tmp_path, f"{anno} table t {{ key = {{ m.a: exact; }} actions = {{ NoAction; }} }} apply {{ t.apply(); }}")
    (a,) = prog.pipeline["ig"].decl.locals[0].annotations
    assert (a.name, a.structured, a.args, a.keys) == ("A", True, args, keys)
    assert anno_strings((a,)) == []


@pytest.mark.parametrize(
    ("anno", "message"),
    [("@A[8w3]", "8w3: illegal type for structured annotation; must be int, string or bool"),
     ("@A[m.a]", "values must be literals or operators on literals"),
     ("@A[k=1, k=2]", "k: duplicate key in a structured annotation")],
    ids=["sized-int", "name", "duplicate-key"],
)
def test_structured_annotation_refusals(tmp_path: Path, anno: str, message: str) -> None:
    """What p4switch cannot put in P4Info's structured_annotations is refused, with where."""
    with pytest.raises(P4Error, match=re.escape(message)) as info:
        _compile(tmp_path, f"{anno} table t {{ key = {{ m.a: exact; }} actions = {{ NoAction; }} }} apply {{ t.apply(); }}")
    assert info.value.coord.line == 3
