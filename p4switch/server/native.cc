// p4switch.server._native: a gRPC server transport in C++ for the P4Runtime
// service, which stays in Python.
//
// Why: grpcio's Python servers spend about 190 µs of CPU per unary call on a
// 2-core machine (thread hand-offs between the poller and the pool), which
// caps one-update-per-request writes below what a P4Runtime switch must
// sustain. This module serves every method with gRPC C++'s callback API as
// raw bytes and hands each call to Python:
//
//   server = Server(handler, max_message_bytes)
//   port = server.start(address, tls)   # tls: None or (key, cert, ca, require_client_auth)
//   server.stop(grace_seconds)          # final: a server is started once
//
// For every incoming call the C++ side reads the first message and calls
// `handler(call, data)` (data None when the client sent none), with the GIL.
// A unary call is answered there or later from any thread (the handler
// returns None); a stream's handler returns a sink, and the C++ side goes on
// reading: it calls `sink.message(data)` for each message, `sink.closed()`
// once the client has no more to send (or the call died), and `sink.done()`
// once the call is over. A false result of `sink.message` pauses reading
// until Python calls `call.resume()` (inbound flow control). Python answers
// through the Call:
//
//   call.method                             # "/p4.v1.P4Runtime/Write"
//   call.write(data, block=True) -> bool    # False: the call is over
//   call.finish(code, message, details=b"", responses=()) -> bool
//   call.resume() -> bool                   # read the next message again
//
// `write` with block=True waits (without the GIL) until the message has been
// handed to the transport, which is how a slow client pushes back on the
// Python thread feeding its stream (it answers False when the call ended
// meanwhile, even if that message went out with the final status); `finish`
// never blocks: the responses are sent in order, then the status (with
// `details` as the grpc-status-details-bin trailer when not empty).
//
// Threads and locks. gRPC runs the reactions (OnReadDone, OnWriteDone,
// OnCancel, OnDone) on its own few threads, never inline from StartRead,
// StartWrite or Finish (gRPC 1.51: the read/write tags are not inlinable and
// OnDone goes through its executor). A call's State is guarded by its mutex.
// Lock order is GIL, then State::mu: nothing waits for the GIL while holding
// the mutex, and nothing calls StartRead/StartWrite/Finish while holding it.
// The reactor is deleted in OnDone unless a Python thread is between taking
// it from the State and using it (`holds`); then that thread deletes it.

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

class Reactor;

// What a call's Python object and its reactor share.
struct State {
  std::mutex mu;
  std::condition_variable cv;
  Reactor* reactor = nullptr;       // null once the call is over (OnDone)
  std::deque<std::string> pending;  // responses not yet handed to StartWrite
  bool writing = false;             // a StartWrite is outstanding
  bool broken = false;              // a write failed: the client is gone
  bool reading = false;             // a StartRead is outstanding
  bool paused = false;              // the sink asked for no more reads until resume()
  bool resume_early = false;        // resume() came before the pause it answers was recorded
  bool finish_queued = false;       // finish() was called (or the call failed)
  bool finished = false;            // Finish() was started
  int holds = 0;                    // Python threads about to call into the reactor
  bool orphan = false;              // OnDone ran while held: the last holder deletes it
  grpc::Status status;
  std::string method;
};

bool python_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

// The GIL for a gRPC thread. Each gRPC thread keeps one Python thread state
// for its whole life (PyGILState_Ensure alone would create and destroy one
// per call); the first use registers it and gives the GIL back.
class Gil {
 public:
  Gil() {
    static thread_local bool registered = false;
    if (!registered) {
      PyGILState_Ensure();
      PyEval_SaveThread();
      registered = true;
    }
    state_ = PyGILState_Ensure();
  }
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

// A new Python bytes object with the ByteBuffer's bytes (nullptr: error set).
PyObject* to_bytes(grpc::ByteBuffer& buf) {
  std::vector<grpc::Slice> slices;
  if (!buf.Dump(&slices).ok()) {
    PyErr_SetString(PyExc_RuntimeError, "cannot read the request message");
    return nullptr;
  }
  size_t n = 0;
  for (auto& s : slices) n += s.size();
  PyObject* out = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(n));
  if (out == nullptr) return nullptr;
  char* p = PyBytes_AS_STRING(out);
  for (auto& s : slices) {
    std::memcpy(p, s.begin(), s.size());
    p += s.size();
  }
  return out;
}

struct PyCall {
  PyObject_HEAD
  std::shared_ptr<State>* state;
};

PyObject* new_call(std::shared_ptr<State> st);

class Reactor final : public grpc::ServerGenericBidiReactor {
 public:
  Reactor(grpc::GenericCallbackServerContext* ctx, PyObject* handler)
      : handler_(handler), st_(std::make_shared<State>()) {
    st_->reactor = this;
    st_->method = ctx->method();
    st_->reading = true;
    StartRead(&request_);
  }

  // Queue the final status after the pending responses (any thread).
  void Queue(grpc::Status status) {
    {
      std::lock_guard<std::mutex> lock(st_->mu);
      if (st_->finish_queued) return;
      st_->finish_queued = true;
      st_->status = std::move(status);
    }
    Pump();
  }

  // Start the next write, or the Finish once nothing is left (any thread).
  // The last response and the status go together (StartWriteAndFinish: one
  // operation, no OnWriteDone), which is the whole answer of a unary call.
  void Pump() {
    std::string data;
    bool write = false, finish = false;
    grpc::Status status;
    {
      std::lock_guard<std::mutex> lock(st_->mu);
      if (st_->writing || st_->finished) return;
      if (!st_->pending.empty()) {
        data = std::move(st_->pending.front());
        st_->pending.pop_front();
        st_->writing = write = true;
      }
      if (st_->pending.empty() && st_->finish_queued) {
        st_->finished = finish = true;
        status = st_->status;
      }
      if (!write && !finish) return;
    }
    if (write) {
      grpc::Slice slice(data);
      response_ = grpc::ByteBuffer(&slice, 1);
    }
    if (write && finish) {
      StartWriteAndFinish(&response_, grpc::WriteOptions(), status);
    } else if (finish) {
      Finish(status);
    } else {
      StartWrite(&response_);
    }
  }

  // Read the next message of a paused stream (a Python thread holding it).
  void Resume() { StartRead(&request_); }

  void OnReadDone(bool ok) override {
    bool more = false;    // a stream whose sink wants the next message
    bool failed = false;  // the call cannot go on: end it
    {
      std::lock_guard<std::mutex> lock(st_->mu);
      st_->reading = false;
    }
    if (!python_alive()) {
      Queue(grpc::Status(grpc::StatusCode::UNAVAILABLE, "p4switch is shutting down"));
      return;
    }
    {
      Gil gil;
      PyObject* data = nullptr;
      if (ok && (data = to_bytes(request_)) == nullptr) {
        PyErr_WriteUnraisable(handler_);
        failed = true;
      } else if (!started_) {
        // The first message (None: the client sent none): handler(call, data)
        // answers a unary call, or returns the sink of a stream (which then
        // always gets the next message: only sink.message() can pause).
        started_ = true;
        PyObject* call = new_call(st_);
        PyObject* r = call ? PyObject_CallFunctionObjArgs(handler_, call, data ? data : Py_None, nullptr) : nullptr;
        Py_XDECREF(call);
        if (r == nullptr) {
          PyErr_WriteUnraisable(handler_);
          failed = true;
        } else if (r != Py_None) {
          sink_ = r;
          more = ok;
        } else {
          Py_DECREF(r);
        }
      } else if (sink_ != nullptr && ok) {
        PyObject* r = PyObject_CallMethod(sink_, "message", "O", data);
        int t = r ? PyObject_IsTrue(r) : -1;
        Py_XDECREF(r);
        if (t < 0) {
          PyErr_WriteUnraisable(sink_);
          failed = true;
        }
        more = t == 1;
      } else if (sink_ != nullptr) {
        PyObject* r = PyObject_CallMethod(sink_, "closed", nullptr);
        if (r == nullptr) PyErr_WriteUnraisable(sink_);
        Py_XDECREF(r);
      }
      Py_XDECREF(data);
      if (ok && sink_ != nullptr && !failed && !more) {
        // The sink asked to pause. A resume() that got here first (the Python
        // side may resume between its decision and this line) cancels it.
        std::lock_guard<std::mutex> lock(st_->mu);
        if (st_->resume_early) {
          st_->resume_early = false;
          more = true;
        } else {
          st_->paused = true;
        }
      }
    }
    if (failed) {
      Queue(grpc::Status(grpc::StatusCode::INTERNAL, "p4switch: the call failed in the server"));
      return;
    }
    if (more) {
      {
        std::lock_guard<std::mutex> lock(st_->mu);
        // A read after Finish would only complete with ok=false; skipping it
        // when Finish has already started just saves the round.
        more = !st_->finished;
        st_->reading = more;
      }
      if (more) StartRead(&request_);
    }
  }

  void OnWriteDone(bool ok) override {
    {
      std::lock_guard<std::mutex> lock(st_->mu);
      st_->writing = false;
      if (!ok) {  // the stream is broken: drop what is left, end the call
        st_->broken = true;
        st_->pending.clear();
        if (!st_->finish_queued) {
          st_->finish_queued = true;
          st_->status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed");
        }
      }
    }
    st_->cv.notify_all();
    Pump();
  }

  void OnCancel() override {
    // Outstanding reads and writes complete with ok=false; make sure the call ends.
    Queue(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
  }

  void OnDone() override {
    if (sink_ != nullptr && python_alive()) {
      Gil gil;
      PyObject* r = PyObject_CallMethod(sink_, "done", nullptr);
      if (r == nullptr) PyErr_WriteUnraisable(sink_);
      Py_XDECREF(r);
      Py_CLEAR(sink_);
    }
    bool last;
    {
      std::lock_guard<std::mutex> lock(st_->mu);
      st_->reactor = nullptr;
      st_->pending.clear();
      st_->orphan = st_->holds > 0;
      last = !st_->orphan;
    }
    st_->cv.notify_all();
    if (last) delete this;
  }

  // A Python thread is done calling into the reactor it held.
  static void Release(const std::shared_ptr<State>& st, Reactor* reactor) {
    bool last;
    {
      std::lock_guard<std::mutex> lock(st->mu);
      last = --st->holds == 0 && st->orphan;
    }
    if (last) delete reactor;
  }

 private:
  PyObject* handler_;  // owned by the PyServer, which outlives its calls
  std::shared_ptr<State> st_;
  PyObject* sink_ = nullptr;
  bool started_ = false;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer response_;
};

// ---- the Call type -------------------------------------------------------

PyTypeObject CallType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyObject* new_call(std::shared_ptr<State> st) {
  PyCall* self = PyObject_New(PyCall, &CallType);
  if (self == nullptr) return nullptr;
  self->state = new std::shared_ptr<State>(std::move(st));
  return reinterpret_cast<PyObject*>(self);
}

void call_dealloc(PyObject* obj) {
  PyCall* self = reinterpret_cast<PyCall*>(obj);
  delete self->state;
  PyObject_Free(obj);
}

PyObject* call_method(PyObject* obj, void*) {
  State& st = **reinterpret_cast<PyCall*>(obj)->state;
  return PyUnicode_FromStringAndSize(st.method.data(), static_cast<Py_ssize_t>(st.method.size()));
}

PyObject* call_write(PyObject* obj, PyObject* args, PyObject* kwargs) {
  static const char* kw[] = {"data", "block", nullptr};
  Py_buffer data;
  int block = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|p", const_cast<char**>(kw), &data, &block)) return nullptr;
  std::shared_ptr<State> st = *reinterpret_cast<PyCall*>(obj)->state;
  std::string copy(static_cast<const char*>(data.buf), static_cast<size_t>(data.len));
  PyBuffer_Release(&data);
  Reactor* reactor;
  {
    std::lock_guard<std::mutex> lock(st->mu);
    if (st->reactor == nullptr || st->finish_queued || st->broken) Py_RETURN_FALSE;
    st->pending.push_back(std::move(copy));
    reactor = st->reactor;
    st->holds++;  // OnDone may run on another thread meanwhile: it leaves the deletion to us
  }
  reactor->Pump();
  Reactor::Release(st, reactor);
  if (!block) Py_RETURN_TRUE;
  bool alive;
  Py_BEGIN_ALLOW_THREADS
  {
    // Scoped so the mutex is released before the GIL is taken back.
    std::unique_lock<std::mutex> lock(st->mu);
    st->cv.wait(lock, [&] { return st->reactor == nullptr || st->broken || (st->pending.empty() && !st->writing); });
    alive = st->reactor != nullptr && !st->broken;
  }
  Py_END_ALLOW_THREADS
  if (alive) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
}

PyObject* call_finish(PyObject* obj, PyObject* args, PyObject* kwargs) {
  static const char* kw[] = {"code", "message", "details", "responses", nullptr};
  int code;
  const char* message;
  Py_ssize_t message_len;
  const char* details = "";
  Py_ssize_t details_len = 0;
  PyObject* responses = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "is#|y#O", const_cast<char**>(kw), &code, &message,
                                   &message_len, &details, &details_len, &responses))
    return nullptr;
  if (code < 0 || code > 16) {
    PyErr_Format(PyExc_ValueError, "gRPC status code %d out of range", code);
    return nullptr;
  }
  std::vector<std::string> out;
  if (responses != nullptr && responses != Py_None) {
    PyObject* seq = PySequence_Fast(responses, "responses must be a sequence of bytes");
    if (seq == nullptr) return nullptr;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    out.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
      if (!PyBytes_Check(item)) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_TypeError, "responses must be bytes");
        return nullptr;
      }
      out.emplace_back(PyBytes_AS_STRING(item), static_cast<size_t>(PyBytes_GET_SIZE(item)));
    }
    Py_DECREF(seq);
  }
  std::shared_ptr<State> st = *reinterpret_cast<PyCall*>(obj)->state;
  grpc::Status status(static_cast<grpc::StatusCode>(code), std::string(message, static_cast<size_t>(message_len)),
                      std::string(details, static_cast<size_t>(details_len)));
  Reactor* reactor;
  {
    std::lock_guard<std::mutex> lock(st->mu);
    if (st->reactor == nullptr || st->finish_queued) Py_RETURN_FALSE;
    if (!st->broken) {
      for (auto& s : out) st->pending.push_back(std::move(s));
    }
    reactor = st->reactor;
    st->holds++;
  }
  reactor->Queue(std::move(status));
  Reactor::Release(st, reactor);
  Py_RETURN_TRUE;
}

PyObject* call_resume(PyObject* obj, PyObject*) {
  std::shared_ptr<State> st = *reinterpret_cast<PyCall*>(obj)->state;
  std::lock_guard<std::mutex> lock(st->mu);
  if (st->reactor == nullptr || st->finished) Py_RETURN_FALSE;
  if (!st->paused) {
    // The pause this answers is not recorded yet (or a read is under way):
    // remembered, so that the pause does not happen.
    st->resume_early = true;
    Py_RETURN_TRUE;
  }
  st->paused = false;
  st->reading = true;
  // Under the mutex: Pump decides on Finish under it too, so no Finish can
  // slip in between the check above and this read (a read started after the
  // call completed would revive a finished call). StartRead never runs a
  // reaction inline, so holding the mutex here cannot deadlock.
  st->reactor->Resume();
  Py_RETURN_TRUE;
}

PyMethodDef call_methods[] = {
    {"write", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(call_write)), METH_VARARGS | METH_KEYWORDS,
     "write(data, block=True) -> bool: send one response message; False once the call is over."},
    {"finish", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(call_finish)), METH_VARARGS | METH_KEYWORDS,
     "finish(code, message, details=b'', responses=()) -> bool: send the responses, then the status."},
    {"resume", call_resume, METH_NOARGS,
     "resume() -> bool: read on after a sink.message() that answered False; False once the call is over."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef call_getset[] = {{"method", call_method, nullptr, "the full method name", nullptr},
                             {nullptr, nullptr, nullptr, nullptr, nullptr}};

// ---- the Server type -----------------------------------------------------

class Generic final : public grpc::CallbackGenericService {
 public:
  explicit Generic(PyObject* handler) : handler_(handler) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    return new Reactor(ctx, handler_);
  }

 private:
  PyObject* handler_;  // owned by the PyServer
};

struct PyServer {
  PyObject_HEAD
  PyObject* handler;
  long max_message;
  Generic* generic;
  grpc::Server* server;
  bool used;      // started once already: a server is not restarted
  bool stopping;  // stop_server ran or runs: the first caller does the work
};

int server_init(PyObject* obj, PyObject* args, PyObject* kwargs) {
  static const char* kw[] = {"handler", "max_message_bytes", nullptr};
  PyServer* self = reinterpret_cast<PyServer*>(obj);
  PyObject* handler;
  long max_message = 4 << 20;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|l", const_cast<char**>(kw), &handler, &max_message)) return -1;
  if (self->handler != nullptr || self->used) {
    PyErr_SetString(PyExc_RuntimeError, "Server is already initialised");
    return -1;
  }
  if (!PyCallable_Check(handler)) {
    PyErr_SetString(PyExc_TypeError, "handler must be callable");
    return -1;
  }
  if (max_message <= 0 || max_message > 0x7fffffff) {
    PyErr_SetString(PyExc_ValueError, "max_message_bytes must be in 1..2**31-1");
    return -1;
  }
  Py_INCREF(handler);
  self->handler = handler;
  self->max_message = max_message;
  return 0;
}

// Stop serving (all calls end; their reactors are gone when this returns),
// then drop the handler, which breaks the cycle handler -> owner -> server.
void stop_server(PyServer* self, double grace) {
  if (self->stopping) return;  // another thread is stopping it (or it is stopped)
  self->stopping = true;
  grpc::Server* server = self->server;
  self->server = nullptr;
  if (server != nullptr) {
    Py_BEGIN_ALLOW_THREADS
    auto deadline = std::chrono::system_clock::now() +
                    std::chrono::microseconds(static_cast<long long>(grace > 0 ? grace * 1e6 : 0));
    server->Shutdown(deadline);
    server->Wait();
    delete server;
    Py_END_ALLOW_THREADS
  }
  delete self->generic;
  self->generic = nullptr;
  Py_CLEAR(self->handler);
}

void server_dealloc(PyObject* obj) {
  stop_server(reinterpret_cast<PyServer*>(obj), 0);
  Py_TYPE(obj)->tp_free(obj);
}

PyObject* server_start(PyObject* obj, PyObject* args) {
  PyServer* self = reinterpret_cast<PyServer*>(obj);
  const char* address;
  PyObject* tls;
  if (!PyArg_ParseTuple(args, "sO", &address, &tls)) return nullptr;
  if (self->used || self->stopping || self->handler == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "a Server is started once, after initialisation");
    return nullptr;
  }
  std::shared_ptr<grpc::ServerCredentials> creds;
  if (tls == Py_None) {
    creds = grpc::InsecureServerCredentials();
  } else {
    const char *key, *cert, *ca;
    int require_client_auth;
    if (!PyArg_ParseTuple(tls, "sszp", &key, &cert, &ca, &require_client_auth)) return nullptr;
    grpc::SslServerCredentialsOptions opts(
        require_client_auth ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                            : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    if (ca != nullptr && *ca) opts.pem_root_certs = ca;
    opts.pem_key_cert_pairs.push_back({key, cert});
    creds = grpc::SslServerCredentials(opts);
  }
  self->used = true;
  self->generic = new Generic(self->handler);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, creds, &port);
  builder.RegisterCallbackGenericService(self->generic);
  builder.SetMaxReceiveMessageSize(static_cast<int>(self->max_message));
  builder.SetMaxSendMessageSize(static_cast<int>(self->max_message));
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::unique_ptr<grpc::Server> server;
  Py_BEGIN_ALLOW_THREADS
  server = builder.BuildAndStart();
  Py_END_ALLOW_THREADS
  if (server == nullptr || port == 0) {
    if (server != nullptr) {
      Py_BEGIN_ALLOW_THREADS
      server->Shutdown();
      server->Wait();
      server.reset();
      Py_END_ALLOW_THREADS
    }
    return PyLong_FromLong(0);
  }
  self->server = server.release();
  return PyLong_FromLong(port);
}

PyObject* server_stop(PyObject* obj, PyObject* args) {
  double grace = 0;
  if (!PyArg_ParseTuple(args, "|d", &grace)) return nullptr;
  stop_server(reinterpret_cast<PyServer*>(obj), grace);
  Py_RETURN_NONE;
}

PyMethodDef server_methods[] = {
    {"start", server_start, METH_VARARGS,
     "start(address, tls) -> port: bind and serve; 0 when the address cannot be bound. "
     "tls: None or (key_pem, cert_pem, ca_pem or None, require_client_auth)."},
    {"stop", server_stop, METH_VARARGS, "stop(grace=0): end every call (after `grace` seconds) and stop."},
    {nullptr, nullptr, 0, nullptr}};

PyTypeObject ServerType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                      "gRPC C++ transport for p4switch's P4Runtime service (see native.cc).", -1, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__native(void) {
  CallType.tp_name = "p4switch.server._native.Call";
  CallType.tp_basicsize = sizeof(PyCall);
  CallType.tp_flags = Py_TPFLAGS_DEFAULT;
  CallType.tp_dealloc = call_dealloc;
  CallType.tp_methods = call_methods;
  CallType.tp_getset = call_getset;
  CallType.tp_doc = "One gRPC call (see native.cc).";
  if (PyType_Ready(&CallType) < 0) return nullptr;

  ServerType.tp_name = "p4switch.server._native.Server";
  ServerType.tp_basicsize = sizeof(PyServer);
  ServerType.tp_flags = Py_TPFLAGS_DEFAULT;
  ServerType.tp_new = PyType_GenericNew;
  ServerType.tp_init = server_init;
  ServerType.tp_dealloc = server_dealloc;
  ServerType.tp_methods = server_methods;
  ServerType.tp_doc = "Server(handler, max_message_bytes=4 MiB): a gRPC server handing calls to Python.";
  if (PyType_Ready(&ServerType) < 0) return nullptr;

  PyObject* m = PyModule_Create(&module);
  if (m == nullptr) return nullptr;
  Py_INCREF(&ServerType);
  if (PyModule_AddObject(m, "Server", reinterpret_cast<PyObject*>(&ServerType)) < 0) return nullptr;
  Py_INCREF(&CallType);
  if (PyModule_AddObject(m, "Call", reinterpret_cast<PyObject*>(&CallType)) < 0) return nullptr;
  return m;
}
