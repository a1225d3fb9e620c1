"""Parse preprocessed P4 text into the AST (`ast.Program`).

The grammar is `p4.lark` (LALR(1), basic lexer + `lexer.P4PostLex`). The Lark
parser is built once per process (grammar analysis cached on disk by Lark).
Syntax errors become `P4Error` with the original file:line:col.

Names defined here: `parse_source`, `parse_int_literal`, `dump` (a parse tree as text).
"""

from __future__ import annotations

import ast as pyast
import functools
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from p4switch.frontend import ast as A
from p4switch.frontend.errors import P4Error
from p4switch.frontend.lexer import P4PostLex
from p4switch.frontend.preprocess import Source

_GRAMMAR = Path(__file__).with_name("p4.lark")


@functools.lru_cache(maxsize=1)
def _parser() -> tuple[Lark, P4PostLex]:
    postlex = P4PostLex()
    lark = Lark(
        _GRAMMAR.read_text(),
        parser="lalr",
        lexer="basic",
        postlex=postlex,
        propagate_positions=True,
        maybe_placeholders=True,
        cache=True,
    )
    return lark, postlex


def parse_int_literal(text: str) -> tuple[int, int | None, bool]:
    """`8w0xFF` -> (255, 8, False); `5` -> (5, None, False); `4s3` -> (3, 4, True)."""
    width: int | None = None
    signed = False
    t = text.replace("_", "")
    for sep in ("w", "s"):
        idx = t.find(sep)
        if idx > 0 and t[:idx].isdigit():
            width = int(t[:idx])
            signed = sep == "s"
            t = t[idx + 1 :]
            break
    low = t.lower()
    if low.startswith("0x"):
        value = int(low[2:], 16)
    elif low.startswith("0b"):
        value = int(low[2:], 2)
    elif low.startswith("0o"):
        value = int(low[2:], 8)
    elif low.startswith("0d"):
        value = int(low[2:], 10)
    else:
        value = int(low, 10)
    return value, width, signed


_ANNO_BINOPS: dict[str, Any] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a // b, "%": lambda a, b: a % b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "&&": lambda a, b: a and b, "||": lambda a, b: a or b,
}


def _anno_const(e: Any) -> bool | int | str:
    """A structured annotation's expression as the value p4c puts in P4Info (int64, string or bool).

    Literals and operators on them only: p4c evaluates named constants too,
    which would need name resolution before parsing ends (refused instead).
    """
    if isinstance(e, A.EBool | A.EStr):
        return e.value
    if isinstance(e, A.EInt):
        if e.width is not None:  # p4c's words
            raise P4Error(e.coord, f"{e.text}: illegal type for structured annotation; must be int, string or bool")
        return e.value
    if isinstance(e, A.EUn) and e.op in ("-", "~", "!"):
        x = _anno_const(e.expr)
        if e.op == "!" and isinstance(x, bool):
            return not x
        if e.op in ("-", "~") and isinstance(x, int) and not isinstance(x, bool):
            return -x if e.op == "-" else ~x
    if isinstance(e, A.EBin) and e.op in _ANNO_BINOPS:
        a, b = _anno_const(e.left), _anno_const(e.right)
        try:
            return _ANNO_BINOPS[e.op](a, b)
        except (TypeError, ZeroDivisionError, ValueError):
            pass
    raise P4Error(getattr(e, "coord", None), "a structured annotation's values must be literals or operators "
                                             "on literals (p4switch does not evaluate names there)")


_OPS_KEEP = {
    "OROR", "ANDAND", "BAR", "CARET", "AMP", "EQEQ", "NE", "LT", "GT", "LE", "GE", "SHL",
    "SHR", "PLUS", "MINUS", "SATPLUS", "SATMINUS", "PP", "STAR", "SLASH", "PERCENT",
    "BANG", "TILDE",
}


@v_args(meta=True)
class _ToAst(Transformer):
    """Lark tree -> AST dataclasses.

    Each public method is a grammar-rule callback named after its rule or
    alias in `p4.lark` (`t_bool`, `decl_name`, ...): Lark calls it with the
    rule's `meta` and transformed children and it returns the AST node (or a
    plain value for helper rules). Methods starting with `_` are helpers.
    """

    def __init__(self, src: Source, postlex: P4PostLex) -> None:
        super().__init__()
        self.src = src
        self.postlex = postlex

    # helpers -----------------------------------------------------------
    def _c(self, meta: Any) -> Any:
        if getattr(meta, "empty", True) and not hasattr(meta, "line"):
            return self.src.coord(0, 0)
        return self.src.coord(meta.line, meta.column)

    def _tc(self, tok: Token) -> Any:
        return self.src.coord(tok.line, tok.column)  # type: ignore[arg-type]  # lark: positions typed Optional, always set here

    @staticmethod
    def _nt(children: list[Any]) -> list[Any]:
        """Children without punctuation tokens."""
        return [c for c in children if not (isinstance(c, Token) and c.type in ("LT", "TLT", "GT"))]

    # names -------------------------------------------------------------
    def decl_name(self, meta, ch):
        return str(ch[0])

    member_name = decl_name
    non_type_name = decl_name
    prop_name = decl_name

    def type_params(self, meta, ch):
        return [c for c in ch if not isinstance(c, Token) or c.type not in ("LT", "TLT")]

    def anns(self, meta, ch):
        out = []
        for tok in ch:
            if isinstance(tok, A.Anno):  # structured_anno
                out.append(tok)
                continue
            name, body = self.postlex.annotations[(tok.line, tok.column)]
            out.append(self._anno(name, body, self._tc(tok)))
        return out

    def structured_anno(self, meta, ch):
        tok, body = ch
        anno = A.Anno(name=str(tok.value), structured=True, coord=self._tc(tok))
        if isinstance(body, dict):
            anno.kv = body
        elif body is not None:
            anno.args = body
        return anno

    def anno_exprs(self, meta, ch):
        return [_anno_const(e) for e in ch if e is not None]

    def anno_kvs(self, meta, ch):
        out: dict[str, Any] = {}
        for kv in ch:
            if kv is None:
                continue
            key, value = kv
            if key in out:
                raise P4Error(self._c(meta), f"{key}: duplicate key in a structured annotation")
            out[key] = _anno_const(value)
        return out

    def _anno(self, name: str, body: list[Token] | None, coord: Any) -> A.Anno:
        anno = A.Anno(name=name, coord=coord)
        if body is None:
            return anno
        if body:
            anno.text = self.src.text[body[0].start_pos : body[-1].end_pos]
            anno.tokens = " ".join(t.value for t in body)
        else:
            anno.text = ""
        parts: list[list[Token]] = [[]]
        depth = 0
        for t in body:
            if t.type != "STRING" and t.value in ("(", "[", "{"):
                depth += 1
            elif t.type != "STRING" and t.value in (")", "]", "}"):
                depth -= 1
            if depth == 0 and t.type != "STRING" and t.value == ",":
                parts.append([])
            else:
                parts[-1].append(t)
        if body:
            for part in parts:
                if len(part) >= 3 and part[1].value == "=" and part[0].type in ("IDENT", "TYPE_IDENT"):
                    anno.kv[part[0].value] = self._anno_value(part[2:])
                else:
                    anno.args.append(self._anno_value(part))
        return anno

    def _anno_value(self, toks: list[Token]) -> Any:
        if len(toks) == 1:
            t = toks[0]
            if t.type == "STRING":
                return pyast.literal_eval(t.value)
            if t.type == "INTEGER":
                return parse_int_literal(t.value)[0]
            if t.value in ("true", "false"):
                return t.value == "true"
            return str(t.value)
        if len(toks) == 2 and toks[0].value == "-" and toks[1].type == "INTEGER":
            return -parse_int_literal(toks[1].value)[0]
        if not toks:
            return ""
        return self.src.text[toks[0].start_pos : toks[-1].end_pos]

    # types -------------------------------------------------------------
    def t_bool(self, meta, ch):
        return A.TBase(name="bool", coord=self._c(meta))

    def t_error(self, meta, ch):
        return A.TBase(name="error", coord=self._c(meta))

    def t_string(self, meta, ch):
        return A.TBase(name="string", coord=self._c(meta))

    def t_int(self, meta, ch):
        return A.TBase(name="int", coord=self._c(meta))

    def t_void(self, meta, ch):
        return A.TBase(name="void", coord=self._c(meta))

    def t_dontcare(self, meta, ch):
        return A.TBase(name="_", coord=self._c(meta))

    def t_bit1(self, meta, ch):
        return A.TBits(width=A.EInt(value=1), signed=False, coord=self._c(meta))

    def _width(self, w: Any) -> Any:
        if isinstance(w, Token) and w.type == "INTEGER":
            return A.EInt(value=parse_int_literal(w.value)[0], coord=self._tc(w))
        return w

    def t_bit(self, meta, ch):
        return A.TBits(width=self._width(self._nt(ch)[0]), signed=False, coord=self._c(meta))

    def t_sint(self, meta, ch):
        return A.TBits(width=self._width(self._nt(ch)[0]), signed=True, coord=self._c(meta))

    def t_varbit(self, meta, ch):
        return A.TVarbit(width=self._width(self._nt(ch)[0]), coord=self._c(meta))

    def width_name(self, meta, ch):
        return A.EName(name=str(ch[0]), coord=self._c(meta))

    def type_name(self, meta, ch):
        return A.TName(name=str(ch[0]), coord=self._c(meta))

    def type_name_dot(self, meta, ch):
        return A.TName(name=str(ch[0]), dot=True, coord=self._c(meta))

    def specialized_type(self, meta, ch):
        ch = self._nt(ch)
        return A.TSpecialized(base=ch[0], args=ch[1], coord=self._c(meta))

    def stack_type(self, meta, ch):
        return A.TStack(elem=ch[0], size=ch[1], coord=self._c(meta))

    def tuple_type(self, meta, ch):
        return A.TTuple(args=self._nt(ch)[0], coord=self._c(meta))

    def type_args(self, meta, ch):
        return list(ch)

    # expressions ---------------------------------------------------------
    def int_lit(self, meta, ch):
        v, w, s = parse_int_literal(ch[0].value)
        return A.EInt(value=v, width=w, signed=s, text=str(ch[0]), coord=self._c(meta))

    def true_lit(self, meta, ch):
        return A.EBool(value=True, coord=self._c(meta))

    def false_lit(self, meta, ch):
        return A.EBool(value=False, coord=self._c(meta))

    def str_lit(self, meta, ch):
        return A.EStr(value=pyast.literal_eval(ch[0].value), coord=self._c(meta))

    def name(self, meta, ch):
        return A.EName(name=str(ch[0]), coord=self._c(meta))

    def dot_name(self, meta, ch):
        return A.EName(name=str(ch[0]), dot=True, coord=self._c(meta))

    def member(self, meta, ch):
        return A.EMember(expr=ch[0], name=ch[1], coord=self._c(meta))

    def index(self, meta, ch):
        return A.EIndex(expr=ch[0], index=ch[1], coord=self._c(meta))

    def slice(self, meta, ch):
        return A.ESlice(expr=ch[0], hi=ch[1], lo=ch[2], coord=self._c(meta))

    def binop(self, meta, ch):
        left, op, right = ch
        return A.EBin(op=str(op), left=left, right=right, coord=self._tc(op))

    def unop(self, meta, ch):
        return A.EUn(op=str(ch[0]), expr=ch[1], coord=self._c(meta))

    def cast(self, meta, ch):
        return A.ECast(type=ch[0], expr=ch[1], coord=self._c(meta))

    def mux(self, meta, ch):
        return A.EMux(cond=ch[0], then=ch[1], else_=ch[2], coord=self._c(meta))

    def args(self, meta, ch):
        out = []
        for c in ch:
            if c is None:
                continue
            out.append(c if isinstance(c, A.Arg) else A.Arg(value=c, coord=getattr(c, "coord", None) or self._c(meta)))
        return out

    def named_arg(self, meta, ch):
        return A.Arg(name=ch[0], value=ch[1], coord=self._c(meta))

    def named_dontcare(self, meta, ch):
        return A.Arg(name=ch[0], value=A.EDontCare(coord=self._c(meta)), coord=self._c(meta))

    def dontcare(self, meta, ch):
        return A.Arg(value=A.EDontCare(coord=self._c(meta)), coord=self._c(meta))

    def expr_list(self, meta, ch):
        return [c for c in ch if c is not None]

    def call(self, meta, ch):
        return A.ECall(func=ch[0], type_args=[], args=ch[1], coord=self._c(meta))

    def call_generic(self, meta, ch):
        ch = self._nt(ch)
        return A.ECall(func=ch[0], type_args=ch[1], args=ch[2], coord=self._c(meta))

    def ctor_call(self, meta, ch):
        return A.ECtor(type=ch[0], args=ch[1], coord=self._c(meta))

    def list_expr(self, meta, ch):
        return A.EList(items=ch[0], coord=self._c(meta))

    def kv_pair(self, meta, ch):
        return (ch[0], ch[1])

    def struct_expr(self, meta, ch):
        return A.EStruct(fields=[c for c in ch if c is not None], coord=self._c(meta))

    def error_member(self, meta, ch):
        return A.EErrorMember(name=ch[0], coord=self._c(meta))

    def type_member(self, meta, ch):
        return A.ETypeMember(type=ch[0], name=ch[1], coord=self._c(meta))

    # keysets
    def ks_mask(self, meta, ch):
        return A.EMask(value=ch[0], mask=ch[2], coord=self._c(meta))

    def ks_range(self, meta, ch):
        return A.ERange(lo=ch[0], hi=ch[2], coord=self._c(meta))

    def ks_default(self, meta, ch):
        return A.EDefault(coord=self._c(meta))

    def ks_dontcare(self, meta, ch):
        return A.EDontCare(coord=self._c(meta))

    def tuple_keyset(self, meta, ch):
        return A.ETuple(items=list(ch), coord=self._c(meta))

    # statements ------------------------------------------------------------
    def block(self, meta, ch):
        return A.SBlock(stmts=[c for c in ch[1:] if c is not None], annos=ch[0] or [], coord=self._c(meta))

    def assignment(self, meta, ch):
        return A.SAssign(lhs=ch[0], rhs=ch[1], coord=self._c(meta))

    def call_stmt(self, meta, ch):
        call = A.ECall(func=ch[0], type_args=[], args=ch[1], coord=self._c(meta))
        return A.SCall(call=call, coord=self._c(meta))

    def call_stmt_generic(self, meta, ch):
        ch = self._nt(ch)
        call = A.ECall(func=ch[0], type_args=ch[1], args=ch[2], coord=self._c(meta))
        return A.SCall(call=call, coord=self._c(meta))

    def if_stmt(self, meta, ch):
        return A.SIf(cond=ch[0], then=ch[1], else_=ch[2], coord=self._c(meta))

    def switch_case(self, meta, ch):
        return A.SwitchCaseAst(label=ch[0], body=ch[1], coord=self._c(meta))

    def switch_stmt(self, meta, ch):
        return A.SSwitch(expr=ch[0], cases=list(ch[1:]), coord=self._c(meta))

    def exit_stmt(self, meta, ch):
        return A.SExit(coord=self._c(meta))

    def return_stmt(self, meta, ch):
        return A.SReturn(value=ch[0], coord=self._c(meta))

    def empty_stmt(self, meta, ch):
        return A.SEmpty(coord=self._c(meta))

    def direct_apply(self, meta, ch):
        return A.SDirectApply(type=ch[0], args=ch[1], coord=self._c(meta))

    # declarations ------------------------------------------------------------
    def empty(self, meta, ch):
        return None

    def const_decl(self, meta, ch):
        return A.DConst(annos=ch[0] or [], type=ch[1], name=ch[2], value=ch[3], coord=self._c(meta))

    def var_decl(self, meta, ch):
        return A.DVar(annos=ch[0] or [], type=ch[1], name=ch[2], init=ch[3], coord=self._c(meta))

    def typedef_decl(self, meta, ch):
        return A.DTypedef(annos=ch[0] or [], type=ch[1], name=ch[2], coord=self._c(meta))

    def newtype_decl(self, meta, ch):
        return A.DTypedef(annos=ch[0] or [], type=ch[1], name=ch[2], newtype=True, coord=self._c(meta))

    def struct_field(self, meta, ch):
        return A.FieldAst(annos=ch[0] or [], type=ch[1], name=ch[2], coord=self._c(meta))

    def _struct(self, kind, meta, ch):
        return A.DStruct(kind=kind, annos=ch[0] or [], name=ch[1], fields=list(ch[2:]), coord=self._c(meta))

    def header_decl(self, meta, ch):
        return self._struct("header", meta, ch)

    def union_decl(self, meta, ch):
        return self._struct("header_union", meta, ch)

    def struct_decl(self, meta, ch):
        return self._struct("struct", meta, ch)

    def enum_decl(self, meta, ch):
        members = [c for c in ch[2:] if c is not None]
        return A.DEnum(annos=ch[0] or [], name=ch[1], members=members, coord=self._c(meta))

    def enum_member(self, meta, ch):
        return (ch[0], ch[1])

    def ser_enum_decl(self, meta, ch):
        pairs = [c for c in ch[3:] if c is not None]
        return A.DEnum(
            annos=ch[0] or [], underlying=ch[1], name=ch[2],
            members=[p[0] for p in pairs], values=[p[1] for p in pairs], coord=self._c(meta),
        )

    def error_decl(self, meta, ch):
        return A.DError(members=[c for c in ch if c is not None], coord=self._c(meta))

    def match_kind_decl(self, meta, ch):
        return A.DMatchKind(members=[c for c in ch if c is not None], coord=self._c(meta))

    def _ret(self, t: Any) -> Any:
        if isinstance(t, Token):  # VOID
            return A.TBase(name="void", coord=self._tc(t))
        return t

    def method_proto(self, meta, ch):
        annos, ret, name, tparams, params = ch
        return A.MethodProto(annos=annos or [], ret=self._ret(ret), name=name,
                             tparams=tparams or [], params=params, coord=self._c(meta))

    def ctor_proto(self, meta, ch):
        return A.MethodProto(annos=ch[0] or [], ret=None, name=str(ch[1]), tparams=[],
                             params=ch[2], is_ctor=True, coord=self._c(meta))

    def extern_obj(self, meta, ch):
        annos, t = ch[0], ch[1]
        if isinstance(t, A.TSpecialized):
            name = t.base.name
            tparams = [a.name for a in t.args if isinstance(a, A.TName)]
            if len(tparams) != len(t.args):
                raise P4Error(t.coord, "syntax error: extern type parameters must be names")
        else:
            name, tparams = t.name, []
        return A.DExternObj(annos=annos or [], name=name, tparams=tparams, methods=list(ch[2:]),
                            coord=self._c(meta))

    def extern_func(self, meta, ch):
        annos, ret, name, tparams, params = ch
        proto = A.MethodProto(annos=annos or [], ret=self._ret(ret), name=name,
                              tparams=tparams or [], params=params, coord=self._c(meta))
        return A.DExternFunc(proto=proto, coord=self._c(meta))

    def function_decl(self, meta, ch):
        annos, ret, name, tparams, params, body = ch
        proto = A.MethodProto(annos=annos or [], ret=self._ret(ret), name=name,
                              tparams=tparams or [], params=params, coord=self._c(meta))
        return A.DFunction(proto=proto, body=body, coord=self._c(meta))

    def params(self, meta, ch):
        return [c for c in ch if c is not None]

    def direction(self, meta, ch):
        return str(ch[0])

    def param(self, meta, ch):
        annos, direction, t, name, default = ch
        return A.ParamAst(annos=annos or [], direction=direction or "", type=t, name=name,
                          default=default, coord=self._c(meta))

    def parser_head(self, meta, ch):
        return ("parser", ch[0] or [], ch[1], ch[2] or [], ch[3], self._c(meta))

    control_head = parser_head

    def parser_proto(self, meta, ch):
        _, annos, name, tparams, params, coord = ch[0]
        return A.DBlockType(kind="parser", name=name, tparams=tparams, params=params, annos=annos, coord=coord)

    def control_proto(self, meta, ch):
        _, annos, name, tparams, params, coord = ch[0]
        return A.DBlockType(kind="control", name=name, tparams=tparams, params=params, annos=annos, coord=coord)

    def package_proto(self, meta, ch):
        return A.DBlockType(kind="package", annos=ch[0] or [], name=ch[1], tparams=ch[2] or [],
                            params=ch[3], coord=self._c(meta))

    def parser_decl(self, meta, ch):
        _, annos, name, tparams, params, coord = ch[0]
        ctor = ch[1] or []
        locals_ = [c for c in ch[2:] if not isinstance(c, A.StateAst)]
        states = [c for c in ch[2:] if isinstance(c, A.StateAst)]
        return A.DParser(annos=annos, name=name, tparams=tparams, params=params, ctor_params=ctor,
                         locals=locals_, states=states, coord=coord)

    def control_decl(self, meta, ch):
        _, annos, name, tparams, params, coord = ch[0]
        ctor = ch[1] or []
        return A.DControl(annos=annos, name=name, tparams=tparams, params=params, ctor_params=ctor,
                          locals=list(ch[2:-1]), apply=ch[-1], coord=coord)

    def value_set_decl(self, meta, ch):
        ch = self._nt(ch)
        return A.DValueSet(annos=ch[0] or [], type=ch[1], size=ch[2], name=ch[3], coord=self._c(meta))

    def parser_state(self, meta, ch):
        # no transition statement: p4c's parser supplies `transition reject;`
        transition = ch[-1] or A.TransitionAst(state="reject", implicit=True, coord=self._c(meta))
        return A.StateAst(annos=ch[0] or [], name=ch[1], stmts=[c for c in ch[2:-1] if c is not None],
                          transition=transition, coord=self._c(meta))

    def trans_direct(self, meta, ch):
        return A.TransitionAst(state=ch[0], coord=self._c(meta))

    def trans_select(self, meta, ch):
        return A.TransitionAst(select=ch[0], cases=list(ch[1:]), coord=self._c(meta))

    def select_case(self, meta, ch):
        return A.SelectCaseAst(keyset=ch[0], state=ch[1], coord=self._c(meta))

    def action_decl(self, meta, ch):
        return A.DAction(annos=ch[0] or [], name=ch[1], params=ch[2], body=ch[3], coord=self._c(meta))

    def instantiation(self, meta, ch):
        return A.DInstance(annos=ch[0] or [], type=ch[1], args=ch[2], name=ch[3], coord=self._c(meta))

    def table_decl(self, meta, ch):
        return A.DTable(annos=ch[0] or [], name=ch[1], props=list(ch[2:]), coord=self._c(meta))

    def tp_key(self, meta, ch):
        return A.TableProp(kind="key", name="key", value=list(ch), coord=self._c(meta))

    def tp_actions(self, meta, ch):
        return A.TableProp(kind="actions", name="actions", value=list(ch), coord=self._c(meta))

    def tp_entries(self, meta, ch):
        return A.TableProp(kind="entries", name="entries", annos=ch[0] or [], const=ch[1] is not None,
                           value=list(ch[2:]), coord=self._c(meta))

    def tp_prop(self, meta, ch):
        return A.TableProp(kind="prop", annos=ch[0] or [], const=ch[1] is not None, name=str(ch[2]),
                           value=ch[3], coord=self._c(meta))

    def key_elem(self, meta, ch):
        return A.KeyElemAst(expr=ch[0], match_kind=ch[1], annos=ch[2] or [], coord=self._c(meta))

    def action_item(self, meta, ch):
        dot, name = ch[1]
        return A.ActionItem(annos=ch[0] or [], name=name, dot=dot, args=ch[2], coord=self._c(meta))

    def path_name(self, meta, ch):
        return (False, ch[0])

    def path_dot(self, meta, ch):
        return (True, ch[0])

    def entry_priority(self, meta, ch):
        return ch[0]

    def entry(self, meta, ch):
        # P4-16's grammar puts an entry's annotations after its action only
        return A.EntryAst(const=ch[0] is not None, priority=ch[1], keyset=ch[2], action=ch[3], annos=ch[4] or [],
                          coord=self._c(meta))

    def start(self, meta, ch):
        return A.Program(decls=[c for c in ch if c is not None], file=self.src.main_file)


def parse_source(src: Source) -> A.Program:
    """Parse preprocessed text into an `ast.Program` (raises `P4Error`)."""
    lark, postlex = _parser()
    postlex.type_names = set()
    postlex.annotations = {}
    try:
        tree = lark.parse(src.text)
    except UnexpectedInput as e:
        raise _syntax_error(src, e, postlex.tokens) from None
    try:
        return _ToAst(src, postlex).transform(tree)
    except Exception as e:  # VisitError wraps our P4Error
        orig = getattr(e, "orig_exc", None)
        if isinstance(orig, P4Error):
            raise orig from None
        raise


def _syntax_error(src: Source, e: UnexpectedInput, toks: list[Token] | None = None) -> P4Error:
    line, col = getattr(e, "line", 0), getattr(e, "column", 0)
    if isinstance(e, UnexpectedToken):
        tok = e.token
        if tok.type == "$END":
            msg = "syntax error: unexpected end of file"
        elif tok.type == "STRAY":  # a character outside an annotation's body
            msg = f"syntax error: unexpected character '{tok.value}'"
        else:
            msg = f"syntax error, unexpected '{tok.value}'"
        line, col = tok.line or line, tok.column or col
        if tok.type == "IDENT" and tok.value == "abstract":
            return P4Error(src.coord(line, col), "abstract extern methods are not supported")
        prev = _previous(toks or [], tok)
        if tok.type == "IDENT" and prev is not None and prev.type == "IDENT":
            # `name x` where name is not a type: the usual cause is an
            # undeclared (or out-of-scope) type name
            return P4Error(src.coord(prev.line, prev.column),  # type: ignore[arg-type]  # lark: positions typed Optional, always set here
                           f"{prev.value}: type not declared")
    elif isinstance(e, UnexpectedCharacters):
        msg = f"syntax error: unexpected character '{src.text[e.pos_in_stream]}'"  # type: ignore[index]  # lark: positions typed Optional, always set here
    elif isinstance(e, UnexpectedEOF):
        msg = "syntax error: unexpected end of file"
    else:
        msg = "syntax error"
    coord = src.coord(line if isinstance(line, int) else 0, col if isinstance(col, int) else 0)
    return P4Error(coord, msg)


def _previous(toks: list[Token], tok: Token) -> Token | None:
    """The token before `tok` in the post-lexed stream (by position)."""
    import bisect

    starts = [t.start_pos for t in toks]
    i = bisect.bisect_left(starts, tok.start_pos)  # type: ignore[type-var]  # lark: positions typed Optional, always set here
    return toks[i - 1] if 0 < i <= len(toks) and (i == len(toks) or toks[i].start_pos == tok.start_pos) else None


def dump(tree: Tree) -> str:
    """A Lark parse tree as indented text, for debugging."""
    return tree.pretty()
