"""IR -> Python for tables: the in-line lookup, the action dispatch, applies in line.

`table` generates, per P4 table, ``tbl_N(_pk, <control params>, _L)`` and
the same body as lines its control pastes in place of each apply
(`apply_inline`): the key lookup reads the `matchtable.Table`'s index structures
straight from module globals, then the hit/miss bookkeeping (direct counter,
meter, idle time, selector choice), then the action of the result `r`, run
in line on its action id where the body allows (`inline_action`). The
`Table` objects themselves are built after compilation (`v1model`) from the
`TableSpec` each table leaves in `BlockGen.tables`.

Names defined here: `table`, `apply_inline`, `inline_action` (`TableSpec` is `genbase`'s).
"""

from __future__ import annotations

from .. import ir
from . import externgen
from .codegen import Env, _fail
from .genbase import BlockGenerator, ControlCtx, Fn, TableSpec, has_return
from .matchtable import table_mode


def apply_inline(bg: BlockGenerator, call: ir.MethodCall) -> str | None:
    """Emit a table apply in line (saves a call); returns the result variable, or None."""
    fn = bg.fn
    ctl = fn.ctl
    if fn.kind != "control" or ctl is None or call.kind != ir.CallKind.TABLE_APPLY:
        return None
    code = bg.call_expr(call, fn.env)
    body = ctl.inline.get(code.split("(", 1)[0])
    if body is None:
        return None
    for line in body:
        fn.w(line)
    return "r"


def table(bg: BlockGenerator, ctl: ControlCtx, t: ir.Table) -> None:
    """Generate tbl_N for a table and its in-line body (the Table object is built by the switch).

    The lookup reads the Table's index structures straight from globals
    (`G_ix` exact dict or LPM prefix list, `G_d` default result, `G_dc`
    default-entry counter): no method call on a hit of a plain table.
    Actions without `return` run in line, dispatched on the action id.
    """
    g = bg.mb.fresh("TBL_" + t.name)
    fname = bg.mb.fresh("tbl_" + t.name)
    ctl.tables[t.name] = fname
    ctl.tables[t.cp_name] = fname
    actions: dict[str, str] = {}
    decls: dict[str, ir.Action] = {}
    for ref in t.actions:
        decl = ctl.action_decls.get(ref.action) or bg.top_actions.get(ref.action)
        if decl is None:
            raise _fail(ref, f"table action '{ref.action}' (not declared)")
        actions[ref.action] = bg.action_fn(ctl, decl)
        decls[ref.action] = decl
    match_keys = [k for k in t.keys if k.match_kind != "selector"]
    sel_keys = [k for k in t.keys if k.match_kind == "selector"]
    mode = table_mode([k.match_kind for k in match_keys])
    profile = bool(t.implementation)
    counter = bool(t.direct_counter)
    meter = bool(t.direct_meter)
    timeout = bool(getattr(t, "support_timeout", False))
    simple = not (profile or counter or meter or timeout)
    fn = Fn("table", ctl.env, ctl)
    bg.fn_stack.append(fn)
    try:
        kcodes = [bg.ex(k.expr) for k in match_keys]
        key = kcodes[0] if len(kcodes) == 1 else "(" + "".join(c + ", " for c in kcodes) + ")"
        v = "r" if simple else "_rec"
        if mode == "exact":
            fn.w(f"{v} = {g}_ix.get({key})")
        elif mode == "lpm" and len(kcodes) == 1:
            fn.w(f"_k = {key}")
            fn.w(f"for _m, _dd in {g}_ix:")
            fn.w(f"    {v} = _dd.get(_k & _m)")
            fn.w(f"    if {v} is not None: break")
            fn.w("else:")
            fn.w(f"    {v} = None")
        elif mode == "lpm":
            fn.w(f"{v} = {g}.find({key})")
        else:  # scan: nothing to do (not even the key) while the table is empty
            fn.w(f"{v} = {g}.find({key}) if {g}_sc else None")
        fn.w(f"if {v} is None:")
        fn.ind += 1
        fn.w(f"r = {g}_d[0]")
        if counter:  # the default entry's direct counter counts misses
            fn.w(f"{g}_dc[0] += 1; {g}_dc[1] += _pk.length")
        if meter:
            fn.w(f"{g}.miss_meter(_pk)")
        fn.ind -= 1
        if not simple:
            fn.w("else:")
            fn.ind += 1
            if timeout:
                fn.w("_rec.entry.last_hit_ns = MONO_NS(); _rec.idle_reported = False")
            if counter:
                fn.w("_e = _rec.entry; _e.counter_packets += 1; _e.counter_bytes += _pk.length")
            if meter:
                fn.w(f"{g}.hit_meter(_rec, _pk)")
            fn.w("r = _rec.result")
            if profile:
                fn.w("if r is None:")
                fn.ind += 1
                fn.w(f"_c = _rec.choices if _rec.cver == {g}_pf.version else {g}.choices(_rec)")
                fn.w("_n = len(_c)")
                if sel_keys:
                    # BMv2 hashes the selector fields packed, skipping invalid headers' fields
                    fn.w("if _n > 1:")
                    fn.ind += 1
                    lv: list = []
                    temps: dict = {}
                    for k in sel_keys:
                        externgen.leaves(bg, k.expr, out=lv, temps=temps)
                    fn.w(f"r = _c[{g}_h({externgen.packed_bytes(lv)}) % _n]")
                    fn.ind -= 1
                    fn.w("else:")
                    fn.w("    r = _c[0] if _n else EMPTY_HIT")
                else:
                    fn.w("r = _c[0] if _n else EMPTY_HIT")
                fn.ind -= 1
            fn.ind -= 1
        _dispatch(bg, ctl, t, actions, decls)
        ctl.inline[fname] = [line[4:] for line in fn.lines]
        fn.w("return r")
    finally:
        bg.fn_stack.pop()
    bg.finish(f"def {fname}({ctl.pass_args}):", fn)
    bg.tables.append(TableSpec(
        table=t, global_name=g, actions=actions,
        key_widths=[bg.ti.width(k.expr.type) for k in match_keys]))


def _dispatch(bg: BlockGenerator, ctl: ControlCtx, t: ir.Table, actions: dict[str, str],
              decls: dict[str, ir.Action]) -> None:
    """Run the action of result `r`: bodies in line on its action id, else a call.

    An action listed with arguments for its directional parameters
    (`setbyte(hdr.s[0].b)`) is called with them bound: its out/inout
    arguments are copied back after it runs (or `exit`s), like a direct call.
    """
    fn = bg.fn
    refs = {ref.action: ref for ref in t.actions}
    branches: list[tuple[int, str, ir.Action]] = []  # (action id, how: inline|bound|call, decl)
    for cp_name, decl in decls.items():
        if not decl.body.stmts:
            continue  # nothing to run (NoAction and friends)
        if any(p.direction for p in decl.params):
            how = "bound"
        elif len(decls) <= 8 and not has_return(decl.body):
            how = "inline"
        else:
            how = "call"
        branches.append((bg.mb.action_id(cp_name), how, decl))
    if not branches:
        return
    if all(how == "call" for _, how, _ in branches):
        fn.w(f"r[0]({ctl.pass_args}, *r[1])")
        return
    fn.w("_a = r[3]")
    for i, (aid, how, decl) in enumerate(branches):
        fn.w(("if" if i == 0 else "elif") + f" _a == {aid}:")
        fn.ind += 1
        if how == "call":
            fn.w(f"r[0]({ctl.pass_args}, *r[1])")
        elif how == "inline":
            inline_action(bg, ctl, decl, "r[1]")
        else:
            _bound_call(bg, decl, refs[decl.cp_name])
        fn.ind -= 1


def _bound_call(bg: BlockGenerator, decl: ir.Action, ref: ir.ActionRef) -> None:
    """Call `decl` with the table's bound directional arguments and the entry's data (`r[1]`)."""
    fn = bg.fn
    env = Env(fn.env)
    args: list[ir.Argument] = []
    bound = iter(ref.args)
    data = 0
    for p in decl.params:
        if p.direction:
            args.append(ir.Argument(name=p.name, direction=p.direction, value=next(bound)))
        else:
            uid = f"$data{data}"
            env.bind(uid, f"r[1][{data}]", p.type)
            args.append(ir.Argument(name=p.name, direction="", value=ir.Var(
                name=p.name, uid=uid, scope=ir.Scope.LOCAL, type=p.type, coord=ref.coord)))
            data += 1
    call = ir.MethodCall(kind=ir.CallKind.ACTION, method=decl.name, target=None, args=args,
                         type=ir.VoidType(), callee=decl.cp_name, coord=ref.coord)
    saved, fn.env = fn.env, env
    try:
        bg.call_stmt(call)
    finally:
        fn.env = saved


def inline_action(bg: BlockGenerator, ctl: ControlCtx, decl: ir.Action, args: str) -> None:
    """Emit an action's body here, its data parameters unpacked from the tuple `args`."""
    fn = bg.fn
    env = Env(ctl.env)
    names = []
    for p in decl.params:
        pn = bg.mb.fresh("a_" + p.name)
        env.bind(p.uid, pn, p.type)
        names.append(pn)
    if names:
        fn.w(f"{', '.join(names)}, = {args}")
    sub = Fn("action", env, ctl)
    sub.lines = fn.lines
    sub.ind = fn.ind
    bg.fn_stack.append(sub)
    try:
        bg.block(decl.body)
    finally:
        bg.fn_stack.pop()


__all__ = ["table", "apply_inline", "inline_action"]
