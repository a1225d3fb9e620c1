"""A program file is untrusted input: the loader checks it, the generators never paste it raw.

The program is l3.p4 compiled by p4switch's front end; each test changes its
JSON (the loader, `ir.from_json`) or its IR (the generators, which must hold
even when handed an IR the loader never saw) so a name carries Python that
would create a marker file if it ran.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import P4_DIR, REPO, program
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from p4switch import ir
from p4switch.frontend import compile_file
from p4switch.ir import decode, progfile
from p4switch.pipeline import CodegenError, PortHarness, compile_program, parsergen
from p4switch.pipeline.codegen import py_name
from p4switch.pipeline.state import ActionCall, FieldMatch, TableEntry
from tests.unit.irwalk import raw_nodes


@pytest.fixture
def marker(tmp_path: Path) -> Iterator[Path]:
    """A file that exists only if injected code ran."""
    path = tmp_path / f"PWNED_{secrets.token_hex(8)}"
    yield path
    assert not path.exists(), "injected code ran"


def payload(marker: Path) -> str:
    return f"x\nimport os; os.system('touch {marker}')\n"


def l3_doc() -> dict[str, Any]:
    return json.loads(ir.to_json(program("l3")))


def _header_field(doc: dict[str, Any]) -> dict[str, Any]:
    ipv4 = next(h for h in raw_nodes(doc, "HeaderType") if h["name"] == "ipv4_t")
    return ipv4["fields"][7]  # ttl


def load(doc: dict[str, Any]) -> ir.Program:
    return ir.from_json(json.dumps(doc))[0]


# (what, where it is in the JSON, the field, the path the error names)
NAME_TARGETS = [
    ("parser state", lambda d: raw_nodes(d, "ParserState")[1], "name", ".states[1].name"),
    ("select target", lambda d: raw_nodes(d, "SelectCase")[0], "state", ".cases[0].state"),
    ("table", lambda d: raw_nodes(d, "Table")[0], "name", ".name"),
    ("table control-plane name", lambda d: raw_nodes(d, "Table")[0], "cp_name", ".cp_name"),
    ("action", lambda d: raw_nodes(d, "Action")[1], "name", ".name"),
    ("action control-plane name", lambda d: raw_nodes(d, "Action")[1], "cp_name", ".cp_name"),
    ("table's action", lambda d: raw_nodes(d, "ActionRef")[0], "action", ".action"),
    ("header field", _header_field, "name", "['ipv4_t'].fields[7].name"),
    ("member", lambda d: raw_nodes(d, "Member")[0], "name", ".name"),
    ("header type", lambda d: raw_nodes(d, "HeaderType")[0], "name", ".name"),
    ("control", lambda d: raw_nodes(d, "Control")[0], "name", ".name"),
    ("extern instance", lambda d: raw_nodes(d, "ExternInstance")[0], "name", ".name"),
    ("variable uid", lambda d: raw_nodes(d, "Var")[0], "uid", ".uid"),
    ("key name", lambda d: raw_nodes(d, "KeyElement")[0], "name", ".name"),
    ("method", lambda d: raw_nodes(d, "MethodCall")[0], "method", ".method"),
    ("annotation", lambda d: raw_nodes(d, "Annotation")[0], "name", ".name"),
]


@pytest.mark.parametrize("what,find,fieldname,path", NAME_TARGETS, ids=[t[0] for t in NAME_TARGETS])
def test_name_holding_code_is_refused_by_the_loader(marker, what, find, fieldname, path) -> None:
    """A name with a newline and Python in it is refused, naming the field, and nothing runs."""
    doc = l3_doc()
    find(doc)[fieldname] = payload(marker)
    with pytest.raises(ir.ProgramFileError) as e:
        load(doc)
    message = str(e.value)
    assert message.startswith("invalid program file: program.")
    assert f"{path}: " in message and " is not " in message
    assert "(near " in message  # the nearest source position


def test_refused_name_is_shown_escaped_and_cut() -> None:
    """The message shows a bad value as a repr (no raw newline), at most 80 characters of it."""
    doc = l3_doc()
    raw_nodes(doc, "ParserState")[1]["name"] = "a\n" + "b" * 500
    with pytest.raises(ir.ProgramFileError) as e:
        load(doc)
    assert "\n" not in str(e.value) and "'a\\nbbb" in str(e.value) and "b" * 100 not in str(e.value)


NUMBER_TARGETS = [
    ("width as code", lambda d: _header_field(d)["type"], "width",
     "8) or __import__('os').system('true') or (8", "is not an int"),
    ("width as bool", lambda d: _header_field(d)["type"], "width", True, "is not an int"),
    ("width as float", lambda d: _header_field(d)["type"], "width", 8.0, "is not an int"),
    ("width zero", lambda d: _header_field(d)["type"], "width", 0, "out of range [1, 65536]"),
    ("width huge", lambda d: _header_field(d)["type"], "width", 10 ** 9, "out of range"),
    ("constant as code", lambda d: raw_nodes(d, "Constant")[0], "value", "1 if __import__('os') else 1",
     "is not an int"),
    ("constant as bool", lambda d: raw_nodes(d, "Constant")[0], "value", False, "is not an int"),
    ("table size negative", lambda d: raw_nodes(d, "Table")[0], "size", -1, "out of range"),
    ("coord line", lambda d: raw_nodes(d, "Table")[0]["coord"], "line", "12", "is not an int"),
]


@pytest.mark.parametrize("what,find,fieldname,value,needle", NUMBER_TARGETS, ids=[t[0] for t in NUMBER_TARGETS])
def test_number_of_the_wrong_kind_or_range_is_refused(what, find, fieldname, value, needle) -> None:
    """Widths, constants and sizes are ints (not bools, floats or strings) within their range."""
    doc = l3_doc()
    find(doc)[fieldname] = value
    with pytest.raises(ir.ProgramFileError) as e:
        load(doc)
    assert needle in str(e.value)


def test_slice_with_hi_below_lo_is_refused() -> None:
    """A slice's bounds are checked together, not only one by one."""
    prog = copy.deepcopy(program("l3"))
    prog.actions.append(ir.Action(name="a", cp_name="a", params=[], body=ir.Block(stmts=[ir.Assign(
        lhs=ir.Var(name="x", uid="x", scope=ir.Scope.LOCAL, type=ir.BitsType(width=8)),
        rhs=ir.Slice(expr=ir.Constant(value=5, type=ir.BitsType(width=8)), hi=1, lo=3,
                     type=ir.BitsType(width=1)))])))
    with pytest.raises(ir.ProgramFileError, match=r"slice \[1:3\] has hi below lo"):
        ir.from_json(ir.to_json(prog))


@pytest.mark.parametrize("text,needle", [
    ('{"format":"p4switch-ir","version":1,"program":{"@":"Program","arch":NaN}}', "NaN is not a JSON number"),
    ('{"format":"p4switch-ir","version":true,"program":{}}', "version True is not supported"),
    ('{"format":"p4switch-ir","version":1,"program":{},"p4info":7}', "p4info: not a string"),
    ('{"format":"p4switch-ir","version":1,"program":{"@":"Table"}}', "'Table' is not a Program node"),
    ('{"format":"p4switch-ir","version":1,"program":{"@":"Program","evil":1}}', "Program has no field 'evil'"),
    ('{"format":"p4switch-ir","version":1,"program":{"@":"Program","arch":"v1model"}}', "Program without source"),
    ('{"format":"p4switch-ir","version":1,"program":' + "[" * 100000 + "]" * 100000 + "}", "bad JSON"),
], ids=["nan", "version-bool", "p4info-not-text", "wrong-node", "unknown-field", "missing-field", "deep"])
def test_malformed_file_is_refused_with_the_reason(text, needle) -> None:
    """Bad JSON, a wrong header, a node of the wrong class or shape: ProgramFileError."""
    with pytest.raises(ir.ProgramFileError) as e:
        ir.from_json(text)
    assert needle in str(e.value)


def test_node_of_the_wrong_class_is_refused_where_it_stands() -> None:
    """An expression field holding a statement (or a whole program) names both."""
    doc = l3_doc()
    raw_nodes(doc, "Member")[0]["expr"] = {"@": "Exit"}
    with pytest.raises(ir.ProgramFileError, match=r"\.expr: 'Exit' is not a Constant or .* node"):
        load(doc)


PROGRAMS = sorted((REPO / "p4").glob("*.p4")) + sorted(P4_DIR.glob("*.p4"))


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_compiled_programs_load_unchanged(path: Path) -> None:
    """What p4switch-compile writes for the fabric roles and the pipeline tests passes the loader whole."""
    prog = compile_file(path, include_dirs=[REPO / "p4" / "include"])
    text = ir.to_json(prog)
    assert ir.to_json(ir.from_json(text)[0]) == text


@pytest.mark.parametrize("form,good,bad", [
    (decode.IDENT, ["start", "_x", "NoAction", "a1"], ["", "1a", "a.b", "a b", "a\n", "é", "a-b"]),
    (decode.QUALIFIED, ["ingress.t1", "NoAction", "A.b.c_1"], [".foo", "a..b", "a.", "a.b\n", "a.b;c"]),
    (decode.UID, ["$se1", "hdr$arg", "pick<bit<16>>", "pick<headers_t, bit<8>[4]>"],
     ["a\nb", "a(b)", "pick<bit<16>>\n", "x'y"]),
    (decode.KEY_NAME, ["hdr.ipv4.dst[31:24]", "h.$valid$", "meta.x & 0xf0", "hdr.s[0].f", "-5"],
     ["a\nb", "a'b", "a;b", "f(x)", ""]),
    (decode.PATH, ["/work/p4/rtsw.p4", "<builtin>", "a b.p4"], ["a\nb.p4", "a\x00b", "x\x7f"]),
    (decode.DIRECTION, ["", "in", "out", "inout"], ["In", "inout\n", "const"]),
], ids=["ident", "qualified", "uid", "key-name", "path", "direction"])
def test_name_forms_take_what_the_compiler_writes_and_nothing_else(form, good, bad) -> None:
    """Each form accepts the names p4switch-compile emits and refuses anything else."""
    assert [v for v in good if form.problem(v)] == []
    assert [v for v in bad if not form.problem(v)] == []


def test_every_node_class_is_decoded_with_a_rule_for_each_field() -> None:
    """The decoder reads every node class of the IR and knows the form or range of each str and
    int field (building it raises RuntimeError for a field without a rule: a new field needs one)."""
    every = {obj for obj in vars(ir).values() if isinstance(obj, type) and dataclasses.is_dataclass(obj)}
    assert decode.node_classes(ir.Program, progfile._ANY_FIELDS) == every


# ------------------------------------------------------------------ the generators


def _rename_state(prog: ir.Program, old: str, new: str) -> None:
    decl = prog.pipeline["p"].decl
    assert isinstance(decl, ir.Parser)
    for st in decl.states:
        if st.name == old:
            st.name = new
        for case in st.transition.cases:
            if case.state == old:
                case.state = new
        if st.transition.state == old:
            st.transition.state = new


def _l3_routes(h: PortHarness) -> None:
    s = h.switch
    s.table_insert("MyIngress.ipv4_lpm", TableEntry(
        match={0: FieldMatch(kind="lpm", value=0x0A000000, prefix_len=8)},
        action=ActionCall(action="MyIngress.set_nhop", args=(1,))))
    s.table_insert("MyIngress.nhop", TableEntry(
        match={0: FieldMatch(kind="exact", value=1)},
        action=ActionCall(action="MyIngress.forward", args=(0x020000000001, 0x020000000002, 3))))


def _udp(ttl: int = 64) -> bytes:
    return bytes(Ether(dst="00:00:00:00:00:01") / IP(src="1.1.1.1", dst="10.0.0.9", ttl=ttl)
                 / UDP(sport=1234, dport=80) / b"hello")


def _indent_of(source: str, needle: str) -> str:
    line = next(x for x in source.splitlines() if needle in x)
    return line[:len(line) - len(line.lstrip())]


@pytest.mark.parametrize("unfold", [True, False], ids=["straight-line", "state-loop"])
def test_parser_state_name_is_never_code(marker, monkeypatch, unfold) -> None:
    """A state name written to fit the generated code's indentation stays a comment: the parser
    still parses and routes, and the code in the name never runs (as a packet goes through it)."""
    if not unfold:
        monkeypatch.setattr(parsergen, "MAX_UNFOLDED_STATES", 0)
    indent = _indent_of(compile_program(program("l3")).source, "parse_ipv4")
    evil = f"parse_ipv4\n{indent}__import__('os').system('touch {marker}')\n{indent}#"
    prog = copy.deepcopy(program("l3"))
    _rename_state(prog, "parse_ipv4", evil)
    with PortHarness(prog) as h:
        _l3_routes(h)
        out = h.send(1, _udp())
        assert not marker.exists()
        assert repr(evil) in h.switch.cp.source
    assert [(port, IP(frame[14:]).ttl) for port, frame in out] == [(3, 63)]


def _rename_field(prog: ir.Program, header: str, old: str, new: str) -> ir.Program:
    prog = copy.deepcopy(prog)
    ht = prog.types[header]
    assert isinstance(ht, ir.HeaderType)
    prog.types[header] = dataclasses.replace(ht, fields=tuple(
        dataclasses.replace(f, name=new) if f.name == old else f for f in ht.fields))

    def walk(node: Any) -> None:
        if isinstance(node, list | tuple):
            for x in node:
                walk(x)
        elif isinstance(node, dict):
            for x in node.values():
                walk(x)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type):
            if isinstance(node, ir.Member) and node.name == old:
                node.name = new
            for f in dataclasses.fields(node):
                walk(getattr(node, f.name))

    walk(prog.pipeline)
    return prog


def test_header_field_name_is_never_code(marker) -> None:
    """A field name holding code becomes a plain attribute name; the header still works."""
    evil = f"ttl = 0; __import__('os').system('touch {marker}'); x"
    prog = _rename_field(program("l3"), "ipv4_t", "ttl", evil)
    with PortHarness(prog) as h:
        _l3_routes(h)
        out = h.send(1, _udp(ttl=9))
        assert not marker.exists()
        assert py_name(evil) in h.switch.cp.source
    assert [(port, IP(frame[14:]).ttl) for port, frame in out] == [(3, 8)]


@pytest.mark.parametrize("name,want", [
    ("ttl", "ttl"), ("class", "F_class"), ("_pad", "F__pad"), ("F_x", "F_F_x"),
    ("a\nb = 1", "F_a_b___1"), ("é", "F__"), ("x²", "F_x_"),
], ids=["plain", "keyword", "underscore", "f-prefix", "code", "non-ascii", "superscript"])
def test_py_name_is_always_a_plain_ascii_identifier(name, want) -> None:
    """Every name becomes [A-Za-z_][A-Za-z0-9_]*; P4 identifiers map one to one."""
    assert py_name(name) == want


def test_width_that_is_not_an_int_is_never_pasted(marker) -> None:
    """A bit width that is a string in an IR built in memory fails generation; it never runs."""
    prog = copy.deepcopy(program("l3"))
    ht = prog.types["ipv4_t"]
    assert isinstance(ht, ir.HeaderType)
    code = f"8 if __import__('os').system('touch {marker}') else 8"
    prog.types["ipv4_t"] = dataclasses.replace(ht, fields=tuple(
        dataclasses.replace(f, type=ir.BitsType(width=code)) if f.name == "ttl" else f  # type: ignore[arg-type]
        for f in ht.fields))
    with pytest.raises(CodegenError, match="where the pipeline needs an int"):
        compile_program(prog)


def test_counter_too_large_to_allocate_is_refused() -> None:
    """Extern arrays are allocated at load: a size past MAX_ARRAY_SIZE is a CodegenError, not a MemoryError."""
    from p4switch.pipeline.externgen import MAX_ARRAY_SIZE

    prog = copy.deepcopy(program("l3"))
    ig = prog.pipeline["ig"].decl
    assert isinstance(ig, ir.Control)
    counter = next(x for x in ig.locals if isinstance(x, ir.ExternInstance) and x.type.name == "counter")
    counter.args[0] = ir.Constant(value=MAX_ARRAY_SIZE + 1, type=ir.BitsType(width=32))
    with pytest.raises(CodegenError, match=f"counter of size {MAX_ARRAY_SIZE + 1}"):
        compile_program(prog)
