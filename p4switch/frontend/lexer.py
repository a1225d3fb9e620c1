"""Post-lexer for the P4 grammar: the context that an LALR(1) grammar cannot see.

P4, like C, needs to know which identifiers name types (``T x;`` declares,
``a.b(x);`` calls). p4c keeps a symbol table in its lexer; we pre-scan the
whole token stream once instead (programs are small), collecting every name
declared as a type (header, struct, enum, extern, parser, control, package,
typedef, type, and type parameters), then:

* IDENT tokens naming a type become TYPE_IDENT;
* ``name<...>(`` whose angle brackets hold only types opens with TLT (a
  generic call or declaration, not a comparison);
* two adjacent ``>`` outside any type-argument list become one SHR token;
* ``@name[...]`` (a structured annotation) becomes SANNOTATION, its
  bracketed expressions left in the stream for the grammar;
* ``@name`` / ``@name(...)`` becomes a single ANNOTATION token; its name and
  body tokens are kept in `P4PostLex.annotations`, so bodies may hold
  anything, characters P4 has no token for too (STRAY, as p4c takes any
  balanced-parenthesis body).

Names defined here: `P4PostLex`.
"""

from __future__ import annotations

from collections.abc import Iterator

from lark import Token

_TYPE_DECL_KW = {"header", "header_union", "struct", "parser", "control", "package"}
_TYPEISH = {"bit", "int", "varbit", "bool", "string", "error", "tuple", "void", "_", ","}
_ANGLE_OPENERS = {"bit", "int", "varbit", "tuple", "value_set"}
_TYPE_STARTS = {"bit", "int", "varbit", "bool", "string", "error", "tuple"}


def _is_ident(tok: Token) -> bool:
    return tok.type == "IDENT"


def _starts_type(toks: list[Token], k: int) -> bool:
    """Whether token `k` can begin a type (a name or a built-in type keyword)."""
    if k >= len(toks) or toks[k].type == "STRING":
        return False
    return toks[k].type == "IDENT" or toks[k].value in _TYPE_STARTS


class P4PostLex:
    """Lark post-lexer implementing the lexer hack (see module docstring)."""

    always_accept = ("STRAY",)  # kept by Lark though no rule uses it: annotation bodies may hold it

    def __init__(self) -> None:
        self.type_names: set[str] = set()
        # (line, column) of an ANNOTATION token -> (name, body tokens or None)
        # keyed by the @ token's (line, column), which lark types as Optional
        self.annotations: dict[tuple[int | None, int | None], tuple[str, list[Token] | None]] = {}
        self.tokens: list[Token] = []

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        """The token stream rewritten as the module docstring lists (TYPE_IDENT, TLT, SHR ...)."""
        toks = self._annotations(list(stream))
        self.tokens = toks  # kept for syntax-error messages
        scopes = self._collect_types(toks)
        for t in toks:
            if t.type == "IDENT" and t.value in self.type_names:
                t.type = "TYPE_IDENT"
        # Type parameters are type names only inside their generic
        # declaration (P4-16 7.2.13), so a variable may be called `T` or `H`.
        for start, end, params in scopes:
            for k in range(start, end):
                t = toks[k]
                if t.type == "IDENT" and t.value in params:
                    t.type = "TYPE_IDENT"
        self._mark_tlt(toks)
        yield from self._merge_shr(toks)

    # ------------------------------------------------------------------
    def _annotations(self, toks: list[Token]) -> list[Token]:
        out: list[Token] = []
        i, n = 0, len(toks)
        while i < n:
            t = toks[i]
            if t.value == "@" and t.type != "STRING" and i + 1 < n:
                name_tok = toks[i + 1]
                body: list[Token] | None = None
                j = i + 2
                if j < n and toks[j].value == "[" and toks[j].type != "STRING":
                    # a structured annotation (P4-16 18.2): its bracketed
                    # expressions or key=value pairs stay in the stream, for
                    # the grammar to parse them as expressions
                    out.append(Token.new_borrow_pos("SANNOTATION", name_tok.value, t))
                    i = j
                    continue
                if j < n and toks[j].value == "(" and toks[j].type != "STRING":
                    depth, k = 0, j
                    while k < n:
                        v = toks[k].value if toks[k].type != "STRING" else None
                        if v == "(":
                            depth += 1
                        elif v == ")":
                            depth -= 1
                            if depth == 0:
                                break
                        k += 1
                    body = toks[j + 1 : k]
                    j = k + 1
                anno = Token.new_borrow_pos("ANNOTATION", "@" + name_tok.value, t)
                self.annotations[(anno.line, anno.column)] = (name_tok.value, body)
                out.append(anno)
                i = j
                continue
            out.append(t)
            i += 1
        return out

    def _collect_types(self, toks: list[Token]) -> list[tuple[int, int, set[str]]]:
        """Collect global type names; return the (start, end, names) scopes of type parameters."""
        names = self.type_names
        scopes: list[tuple[int, int, set[str]]] = []
        n = len(toks)

        def val(k: int) -> str | None:
            """The text of token `k`, or None for a string or past either end."""
            if 0 <= k < n and toks[k].type != "STRING":
                return toks[k].value
            return None

        for i, t in enumerate(toks):
            v = val(i)
            if v in _TYPE_DECL_KW and i + 1 < n and _is_ident(toks[i + 1]):
                names.add(toks[i + 1].value)
            elif v == "enum":
                k = i + 1
                while k < n and val(k) not in ("{", ";"):
                    k += 1
                if val(k) == "{" and _is_ident(toks[k - 1]):
                    names.add(toks[k - 1].value)
            elif v == "typedef" or (v == "type" and _starts_type(toks, i + 1) and val(i - 1) != "."):
                # `type` is also a name (`h.eth.type = X;`, `type = h.x;`): it
                # declares a type only when a type follows it
                k = i + 1
                while k < n and val(k) not in (";", "{", "}"):
                    k += 1
                if val(k) == ";" and _is_ident(toks[k - 1]):
                    names.add(toks[k - 1].value)
            elif v == "extern" and i + 2 < n and _is_ident(toks[i + 1]):
                nxt = val(i + 2)
                if nxt == "{":
                    names.add(toks[i + 1].value)
                elif nxt == "<":
                    close = self._match_angle(toks, i + 2)
                    if close is not None and val(close + 1) == "{":
                        names.add(toks[i + 1].value)
            elif _is_ident(t) and val(i + 1) == "<":
                # name<A, B>( or name<A>{ : a generic declaration (or call):
                # A and B are type (parameter) names.
                k = i + 2
                params: list[str] = []
                ok = True
                while k < n:
                    if toks[k].type in ("IDENT",):
                        params.append(toks[k].value)
                    elif val(k) == ",":
                        pass
                    elif val(k) == ">":
                        break
                    else:
                        ok = False
                        break
                    k += 1
                if ok and params and val(k + 1) in ("(", "{"):
                    scopes.append((self._decl_start(toks, i), self._decl_end(toks, k + 1), set(params)))
        return scopes

    @staticmethod
    def _decl_start(toks: list[Token], i: int) -> int:
        """Index of the first token of the declaration whose name is at i (return type included)."""
        k = i - 1
        while k >= 0:
            t = toks[k]
            if t.type != "STRING" and t.value in (";", "{", "}"):
                return k + 1
            k -= 1
        return 0

    @staticmethod
    def _decl_end(toks: list[Token], k: int) -> int:
        """End (exclusive) of a generic declaration whose parameter list or body opens at k."""
        n = len(toks)

        def match(i: int, open_: str, close: str) -> int:
            """The index of the `close` balancing the `open_` at or after `i` (else the last)."""
            depth = 0
            for j in range(i, n):
                t = toks[j]
                if t.type == "STRING":
                    continue
                if t.value == open_:
                    depth += 1
                elif t.value == close:
                    depth -= 1
                    if depth == 0:
                        return j
            return n - 1

        while k < n:
            v = toks[k].value if toks[k].type != "STRING" else None
            if v == "(":
                k = match(k, "(", ")") + 1
            elif v == "{":
                return match(k, "{", "}") + 1
            else:
                # `;` ends a prototype; anything else ends the declaration head
                return k + 1
        return n

    @staticmethod
    def _match_angle(toks: list[Token], i: int) -> int | None:
        depth = 0
        for k in range(i, len(toks)):
            v = toks[k].value if toks[k].type != "STRING" else None
            if v == "<":
                depth += 1
            elif v == ">":
                depth -= 1
                if depth == 0:
                    return k
            elif v in (";", "{", "}", "(", ")"):
                return None
        return None

    def _mark_tlt(self, toks: list[Token]) -> None:
        n = len(toks)
        for i in range(1, n - 1):
            lt = toks[i]
            if lt.type != "LT":
                continue
            prev = toks[i - 1]
            if prev.type == "TYPE_IDENT" or prev.type == "STRING":
                continue
            if prev.type != "IDENT" and not (
                prev.type.startswith("KW_") and i >= 2 and toks[i - 2].value == "."
            ):
                continue
            depth = 0
            k = i
            ok = True
            while k < n:
                tk = toks[k]
                v = tk.value if tk.type != "STRING" else None
                if tk.type == "LT":
                    depth += 1
                elif tk.type == "GT":
                    depth -= 1
                    if depth == 0:
                        break
                elif tk.type == "TYPE_IDENT" or v in _TYPEISH:
                    pass
                elif tk.type == "INTEGER" and toks[k - 1].type == "LT" and toks[k - 2].value in (
                    "bit", "int", "varbit",
                ):
                    pass
                elif v in ("[", "]") or (tk.type == "INTEGER" and toks[k - 1].value == "["):
                    pass
                else:
                    ok = False
                    break
                k += 1
            if ok and k + 1 < n and toks[k + 1].value == "(" and toks[k + 1].type != "STRING":
                lt.type = "TLT"

    @staticmethod
    def _merge_shr(toks: list[Token]) -> Iterator[Token]:
        stack = 0
        i, n = 0, len(toks)
        while i < n:
            t = toks[i]
            if t.type in ("LT", "TLT"):
                prev = toks[i - 1] if i else None
                if t.type == "TLT" or (
                    prev is not None
                    and (prev.type == "TYPE_IDENT" or (prev.type != "STRING" and prev.value in _ANGLE_OPENERS))
                ):
                    stack += 1
            elif t.type == "GT":
                if stack:
                    stack -= 1
                elif (
                    i + 1 < n
                    and toks[i + 1].type == "GT"
                    and toks[i + 1].line == t.line
                    and toks[i + 1].column == t.column + 1  # type: ignore[operator]  # lark: positions typed Optional, always set here
                ):
                    yield Token.new_borrow_pos("SHR", ">>", t)
                    i += 2
                    continue
            yield t
            i += 1
