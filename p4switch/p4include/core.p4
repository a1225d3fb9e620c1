/* core.p4 for p4switch: the P4-16 core library (P4-16 spec, appendix
 * "P4 core library"), declared by the project. Names, signatures and member
 * order follow the specification so that programs written for p4c compile
 * unchanged. */

#ifndef _CORE_P4_
#define _CORE_P4_

/* Standard error codes; programs may add members with their own `error`. */
error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

/* The packet being parsed. */
extern packet_in {
    /* Fixed-size header: copy its bits from the packet, make it valid. */
    void extract<T>(out T hdr);
    /* Header with one varbit field of the given size in bits. */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Read bits without moving the cursor. */
    T lookahead<T>();
    /* Move the cursor forward. */
    void advance(in bit<32> sizeInBits);
    /* Length of the whole packet in bytes. */
    bit<32> length();
}

/* The packet being deparsed. */
extern packet_out {
    /* Append a valid header (or each valid header of a struct/stack). */
    void emit<T>(in T hdr);
}

/* Leave the parser with `toSignal` when `check` is false. */
extern void verify(in bool check, in error toSignal);

/* The action that does nothing. */
@noWarn("unused")
action NoAction() {}

/* Match kinds every target supports. */
match_kind {
    exact,
    ternary,
    lpm
}

/* Compile-time check, declared as p4c's core.p4 does: compiling stops with `message`
 * at the call when `check` is false. It returns true, so that it can
 * initialise a constant: const bool ok = static_assert(V1MODEL_VERSION >= 20180101); */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif /* _CORE_P4_ */
