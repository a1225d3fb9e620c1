/* Batched receive and send for p4switch's raw-socket ports (the `p4switch._rawio` module).

   `recv_frames(fd, limit, drop_outgoing)` takes up to `limit` frames waiting on a
   non-blocking AF_PACKET socket with one recvmmsg(2) call and returns them as a list of
   bytes, each with the 802.1Q tag the kernel took out of it put back after the MAC
   addresses (from the PACKET_AUXDATA control message, which the socket must have
   asked for), and without the frames the interface sent (PACKET_OUTGOING) when
   `drop_outgoing` is true. An empty list means nothing was waiting.

   `send_frames(fd, frames)` sends a list of bytes in order with sendmmsg(2), up to 64
   frames a system call, and returns the indices of the frames the kernel refused (a
   full queue, an interface gone down): those are dropped, the others still go.

   Python's socket.recvmsg and send do the same one frame a call, and recvmsg names the
   interface in the address it returns with an ioctl(SIOCGIFNAME) per frame; this module
   is what `p4switch.io.RawPorts` uses when it was built (`setup.py`), those otherwise.

   The buffers and message headers are the module's own. They are used with the GIL held
   (the calls do not block) and without running Python code in between (no object that
   could start the cyclic collector is made while they are in use), so calls from
   several threads never share them at once. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define BATCH 64
#define FRAME_BUF 65536 /* the largest frame a packet socket hands over (SNAPLEN + 1) */
#define VLAN_TAG 4

#ifndef TP_STATUS_VLAN_VALID
#define TP_STATUS_VLAN_VALID (1 << 4)
#endif
#ifndef TP_STATUS_VLAN_TPID_VALID
#define TP_STATUS_VLAN_TPID_VALID (1 << 6)
#endif

static unsigned char *frames;                   /* BATCH buffers of FRAME_BUF bytes */
static struct mmsghdr msgs[BATCH];
static struct iovec iovs[BATCH];
static struct sockaddr_ll addrs[BATCH];
static union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
} controls[BATCH];

/* The tag to put back (host order TPID << 16 | TCI), or 0 when there is none. */
static uint32_t vlan_of(struct msghdr *m) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA ||
            c->cmsg_len < CMSG_LEN(sizeof(struct tpacket_auxdata)))
            continue;
        struct tpacket_auxdata aux;
        memcpy(&aux, CMSG_DATA(c), sizeof aux);
        if (!(aux.tp_status & TP_STATUS_VLAN_VALID) && aux.tp_vlan_tci == 0)
            return 0;
        uint16_t tpid = (aux.tp_status & TP_STATUS_VLAN_TPID_VALID) ? aux.tp_vlan_tpid : 0x8100;
        return ((uint32_t)tpid << 16) | aux.tp_vlan_tci;
    }
    return 0;
}

static PyObject *frame_bytes(const unsigned char *data, size_t len, uint32_t tag) {
    if (tag == 0 || len < 12)
        return PyBytes_FromStringAndSize((const char *)data, (Py_ssize_t)len);
    PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(len + VLAN_TAG));
    if (b == NULL)
        return NULL;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(b);
    memcpy(out, data, 12);
    out[12] = (unsigned char)(tag >> 24);
    out[13] = (unsigned char)(tag >> 16);
    out[14] = (unsigned char)(tag >> 8);
    out[15] = (unsigned char)tag;
    memcpy(out + 12 + VLAN_TAG, data + 12, len - 12);
    return b;
}

static PyObject *recv_frames(PyObject *self, PyObject *args) {
    int fd, limit, drop_outgoing;
    if (!PyArg_ParseTuple(args, "iip:recv_frames", &fd, &limit, &drop_outgoing))
        return NULL;
    if (limit < 1 || limit > BATCH) {
        PyErr_Format(PyExc_ValueError, "recv_frames: limit must be 1..%d, not %d", BATCH, limit);
        return NULL;
    }
    if (frames == NULL) {
        frames = malloc((size_t)BATCH * FRAME_BUF);
        if (frames == NULL)
            return PyErr_NoMemory();
    }
    for (int i = 0; i < limit; i++) {
        iovs[i].iov_base = frames + (size_t)i * FRAME_BUF;
        iovs[i].iov_len = FRAME_BUF;
        memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
        msgs[i].msg_hdr.msg_iov = &iovs[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &addrs[i];
        msgs[i].msg_hdr.msg_namelen = sizeof addrs[i];
        msgs[i].msg_hdr.msg_control = controls[i].buf;
        msgs[i].msg_hdr.msg_controllen = sizeof controls[i].buf;
    }
    /* The list first: creating it may run the cyclic collector (hence Python code, which
       may let another thread in); from the system call on, nothing below runs Python. */
    PyObject *list = PyList_New(0);
    if (list == NULL)
        return NULL;
    int n = recvmmsg(fd, msgs, (unsigned int)limit, MSG_DONTWAIT, NULL);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return list;
        Py_DECREF(list);
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    for (int i = 0; i < n; i++) {
        if (drop_outgoing && addrs[i].sll_pkttype == PACKET_OUTGOING)
            continue;
        size_t len = msgs[i].msg_len;
        PyObject *b = frame_bytes(iovs[i].iov_base, len, vlan_of(&msgs[i].msg_hdr));
        if (b == NULL || PyList_Append(list, b) < 0) {
            Py_XDECREF(b);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(b);
    }
    return list;
}

static struct mmsghdr out_msgs[BATCH];
static struct iovec out_iovs[BATCH];

static PyObject *send_frames(PyObject *self, PyObject *args) {
    int fd;
    PyObject *list;
    if (!PyArg_ParseTuple(args, "iO!:send_frames", &fd, &PyList_Type, &list))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyBytes_Check(PyList_GET_ITEM(list, i))) {
            PyErr_Format(PyExc_TypeError, "send_frames: frame %zd is %.100s, not bytes", i,
                         Py_TYPE(PyList_GET_ITEM(list, i))->tp_name);
            return NULL;
        }
    }
    PyObject *refused = PyList_New(0);
    if (refused == NULL)
        return NULL;
    Py_INCREF(list); /* the frames' buffers stay ours while the kernel copies them */
    Py_ssize_t i = 0;
    while (i < n) {
        int k = (int)(n - i < BATCH ? n - i : BATCH);
        for (int j = 0; j < k; j++) {
            PyObject *b = PyList_GET_ITEM(list, i + j);
            out_iovs[j].iov_base = PyBytes_AS_STRING(b);
            out_iovs[j].iov_len = (size_t)PyBytes_GET_SIZE(b);
            memset(&out_msgs[j].msg_hdr, 0, sizeof out_msgs[j].msg_hdr);
            out_msgs[j].msg_hdr.msg_iov = &out_iovs[j];
            out_msgs[j].msg_hdr.msg_iovlen = 1;
        }
        int r = sendmmsg(fd, out_msgs, (unsigned int)k, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) { /* the first frame left was refused: count it, go on with the next */
            PyObject *at = PyLong_FromSsize_t(i);
            if (at == NULL || PyList_Append(refused, at) < 0) {
                Py_XDECREF(at);
                Py_DECREF(refused);
                Py_DECREF(list);
                return NULL;
            }
            Py_DECREF(at);
            i++;
            continue;
        }
        i += r;
    }
    Py_DECREF(list);
    return refused;
}

static PyMethodDef methods[] = {
    {"recv_frames", recv_frames, METH_VARARGS,
     "recv_frames(fd, limit, drop_outgoing) -> list[bytes]: up to `limit` waiting frames, "
     "802.1Q tags put back, the interface's own frames left out when drop_outgoing."},
    {"send_frames", send_frames, METH_VARARGS,
     "send_frames(fd, frames) -> list[int]: send the frames (a list of bytes) in order with "
     "sendmmsg; the indices of those the kernel refused."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "p4switch._rawio",
    "Batched receive and send for p4switch's raw-socket ports (recvmmsg, sendmmsg).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__rawio(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "BATCH", BATCH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
