#pragma once

// A plain connection's TCP socket whose idle read tells Asio's reactor when it emptied the socket (internal to
// common/http/server.cpp, included by server_conn.hpp only).
//
// Asio 1.81's epoll reactor registers a socket edge-triggered and keeps, per socket and kind of operation, whether
// the next operation is to be tried at once ("speculatively") or queued until epoll reports the socket ready. Writes
// clear that flag when they write less than they were given; reads clear it only at the end of the stream. So after
// an answer, the session's next read always tries the socket first, and finds it empty whenever the client has not
// sent its next request yet: a `recvfrom` that returns EAGAIN for about three answers in four at 64 connections
// (docs/performance.md, "The read after an answer").
//
// async_read_marking_drained() is that read, with one difference: the socket has TCP_INQ on, so every read brings
// back the kernel's count of what its receive queue still holds, taken after the copy; when that count is zero the
// read reports to the reactor that it exhausted the socket, as Asio does for a short write, and the next read waits
// for the socket's next edge instead of trying it first. Every byte, end of stream or error that arrives after the
// count was taken raises a new edge, which sets the flag again. An end of stream that is already there when the count
// is taken (a request and the client's FIN that arrived together, with one edge for both) raises no edge of its own:
// the kernel counts it as one byte more for exactly that reason (tcp_inq_hint), so such a read does not report the
// socket exhausted and the next read finds the end at once. The size of the read cannot tell that: a read of fewer
// bytes than its buffer may have stopped at a FIN that is already there (session 40 tried it and reverted it:
// docs/performance.md). A reset is not counted: when one arrives with a request's bytes, the read of the request's
// rest tries the socket before it waits (server.cpp, read_at_once), and a whole request's answer meets the reset when
// it is written; either ends the connection at once. Without the count (TCP_INQ refused, another kernel), no read is
// reported exhausted.
//
// With a BurstRing (one network thread, io_uring allowed: use_ring()), a read that waited for its socket's edge does
// not read in the reactor: the sockets one epoll_wait found readable are read together, with one io_uring_enter once
// the reactor's turn has run, instead of one recvmsg each (burst_ring.hpp; docs/performance.md, "The requests of a
// burst in one system call"). The read carries MSG_DONTWAIT and the same TCP_INQ count; the reactor then completes it
// as it would have (start_op with the result), so that a read that emptied the socket still marks it exhausted. A
// read through the ring that finds nothing (not expected: the edge said there was something) completes with
// would_block and marks the socket exhausted: the caller reads again, and that read waits for the next edge. A read
// the ring cannot take or did not carry out is done here, as without a ring. A read tried at once (the first of the
// next request, or one after a read that left bytes) never goes through the ring: the socket may well be empty.
//
// This uses Asio's detail layer (the reactor's operation and start_op), whose contract is Boost 1.81's: with another
// Boost, another reactor (io_uring) or without epoll, the read is the plain async_read_some.

#include <boost/asio/async_result.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/version.hpp>
#include <cstddef>
#include <memory>
#include <utility>

#include "common/http/burst_ring.hpp"

#if defined(__linux__)
#include <netinet/tcp.h>
#endif

#if BOOST_VERSION == 108100 && defined(BOOST_ASIO_HAS_EPOLL) && !defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT) && \
    defined(TCP_INQ) && defined(TCP_CM_INQ)
#define ORDERHUB_DRAIN_AWARE_READ 1
#include <sys/socket.h>
#include <sys/uio.h>

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/detail/bind_handler.hpp>
#include <boost/asio/detail/fenced_block.hpp>
#include <boost/asio/detail/handler_alloc_helpers.hpp>
#include <boost/asio/detail/handler_cont_helpers.hpp>
#include <boost/asio/detail/handler_work.hpp>
#include <boost/asio/detail/memory.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/detail/socket_ops.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>
#include <cerrno>
#include <cstring>
#endif

namespace common::http::detail {

#ifdef ORDERHUB_DRAIN_AWARE_READ
namespace drain_aware {

namespace ad = boost::asio::detail;

/// The reactor operation of async_read_marking_drained: Asio's reactive_socket_recv_op for one buffer, except that it
/// reads with recvmsg() and reports a read after which the kernel counts nothing left to read (TCP_INQ: no byte and
/// no end of stream) as done_and_exhausted; with a ring, a read after the socket's edge is carried out by the ring.
template <class Handler, class IoExecutor>
class RecvOp : public ad::reactor_op {
public:
    BOOST_ASIO_DEFINE_HANDLER_PTR(RecvOp);

    RecvOp(ad::socket_type socket, boost::asio::mutable_buffer buffer, Handler& handler, const IoExecutor& io_ex)
        : ad::reactor_op(boost::system::error_code(), &RecvOp::do_perform, &RecvOp::do_complete),
          socket_(socket),
          iov_{buffer.data(), buffer.size()},
          handler_(std::move(handler)),
          work_(handler_, io_ex) {}

    /// From now on (after start_op's first try), a read the reactor performs after the socket's edge is carried out
    /// by `ring` with the burst; `data` is the socket's reactor registration (null once the socket is closed).
    void use_ring(BurstRing* ring, ad::reactor* reactor, boost::asio::ip::tcp::socket* owner,
                  ad::reactor::per_descriptor_data* data) {
        ring_ = ring;
        reactor_ = reactor;
        owner_ = owner;
        data_ = data;
        mode_ = Mode::via_ring;
    }

    static status do_perform(ad::reactor_op* base) {
        auto* o = static_cast<RecvOp*>(base);
        switch (o->mode_) {
            case Mode::result: return o->result_;  // read by the ring (finish)
            case Mode::via_ring:
                o->mode_ = Mode::to_ring;  // handed to the ring by do_complete, once the reactor lets go of it
                return done;
            default: break;
        }
        for (;;) {
            o->prepare();
            const auto n = ::recvmsg(o->socket_, &o->msg_, 0);  // the socket is non-blocking (start())
            if (n < 0) {
                if (errno == EINTR) continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK) return not_done;  // queued until the socket's next edge
                o->ec_ = boost::system::error_code(errno, boost::asio::error::get_system_category());
                o->bytes_transferred_ = 0;
                return done;
            }
            return o->took(static_cast<int>(n));
        }
    }

    static void do_complete(void* owner, ad::operation* base, const boost::system::error_code& /*ec*/,
                            std::size_t /*bytes_transferred*/) {
        auto* o = static_cast<RecvOp*>(base);
        if (owner != nullptr && o->mode_ == Mode::to_ring) {
            // Not read yet: the ring reads it with the burst (or, when it cannot, has finish() read it here).
            o->ring_->queue_receive(*o->owner_, o->prepare(), BurstRing::Handler(Resume{o}));
            return;
        }
        ptr p = {ad::addressof(o->handler_), o, o};
        ad::handler_work<Handler, IoExecutor> w(std::move(o->work_));
        // The handler is moved out so that the operation's memory is freed before the upcall (as Asio's own ops).
        ad::binder2<Handler, boost::system::error_code, std::size_t> handler(o->handler_, o->ec_,
                                                                             o->bytes_transferred_);
        p.h = ad::addressof(handler.handler_);
        p.reset();
        if (owner != nullptr) {
            ad::fenced_block b(ad::fenced_block::half);
            w.complete(handler, handler.handler_);
        }
    }

private:
    enum class Mode : unsigned char {
        direct,    ///< perform reads (no ring, or the ring did not read)
        via_ring,  ///< perform (after an edge) leaves the read to the ring
        to_ring,   ///< to be handed to the ring (do_complete)
        result,    ///< read by the ring: perform reports result_
    };

    /// The ring's completion of a read: finishes the operation; destroyed uncalled (the io_context going away), it
    /// frees the operation without calling its handler, as Asio frees the operations it still holds.
    struct Resume {
        RecvOp* op;
        explicit Resume(RecvOp* o) : op(o) {}
        Resume(Resume&& r) noexcept : op(std::exchange(r.op, nullptr)) {}
        Resume& operator=(Resume&&) = delete;
        Resume(const Resume&) = delete;
        Resume& operator=(const Resume&) = delete;
        ~Resume() {
            if (op != nullptr) op->destroy();
        }
        void operator()(int result) { std::exchange(op, nullptr)->finish(result); }
    };

    msghdr* prepare() {
        msg_ = msghdr{};
        msg_.msg_iov = &iov_;
        msg_.msg_iovlen = 1;
        msg_.msg_control = control_;
        msg_.msg_controllen = sizeof control_;
        return &msg_;
    }

    /// A read of `n` bytes (0: the end of the stream).
    status took(int n) {
        bytes_transferred_ = static_cast<std::size_t>(n);
        if (n == 0) {
            ec_ = boost::asio::error::eof;  // as Asio reads a stream (the buffer is never empty here)
            return done;
        }
        ec_ = {};
        return left_in_queue(msg_) == 0 ? done_and_exhausted : done;
    }

    /// The ring's result of the read (BurstRing::queue_receive): the reactor completes the operation with it (so that
    /// a read that emptied the socket marks it exhausted), or, when the ring did not read, reads it now.
    void finish(int result) {
        if (result == -ECANCELED) {
            mode_ = Mode::direct;
        } else {
            mode_ = Mode::result;
            if (result >= 0) {
                result_ = took(result);
            } else {
                // Nothing there after all: the socket is empty now, and its next edge is for the caller's next read.
                bytes_transferred_ = 0;
                ec_ = result == -EAGAIN ? boost::system::error_code(boost::asio::error::would_block)
                                        : boost::system::error_code(-result, boost::asio::error::get_system_category());
                result_ = result == -EAGAIN ? done_and_exhausted : done;
            }
        }
        restart();
    }

    /// Gives the operation back to the reactor, which performs it at once (its socket's reads are to be tried: the
    /// edge that handed it to the ring said so) and completes it. A socket closed meanwhile has no registration any
    /// more, and start_op completes the operation with bad_descriptor, as for any of Asio's own.
    void restart() { reactor_->start_op(ad::reactor::read_op, socket_, *data_, this, true, true); }

    /// What the kernel counted in the receive queue after the read (TCP_CM_INQ; an end of stream already there
    /// counts one), or -1 without the count.
    static int left_in_queue(msghdr& msg) {
        if ((msg.msg_flags & MSG_CTRUNC) != 0) return -1;
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level == SOL_TCP && c->cmsg_type == TCP_CM_INQ && c->cmsg_len >= CMSG_LEN(sizeof(int))) {
                int left = 0;
                std::memcpy(&left, CMSG_DATA(c), sizeof left);
                return left;
            }
        }
        return -1;
    }

    ad::socket_type socket_;
    iovec iov_;
    msghdr msg_{};
    alignas(cmsghdr) char control_[CMSG_SPACE(sizeof(int))]{};
    Handler handler_;
    ad::handler_work<Handler, IoExecutor> work_;
    Mode mode_ = Mode::direct;
    status result_ = done;
    BurstRing* ring_ = nullptr;
    ad::reactor* reactor_ = nullptr;
    boost::asio::ip::tcp::socket* owner_ = nullptr;
    ad::reactor::per_descriptor_data* data_ = nullptr;
};

/// Per-operation cancellation of a RecvOp (Asio's reactor_op_cancellation, which is not public).
class Cancellation {
public:
    Cancellation(ad::reactor* r, ad::reactor::per_descriptor_data* data, ad::socket_type s)
        : reactor_(r), data_(data), socket_(s) {}
    void operator()(boost::asio::cancellation_type_t type) {
        using boost::asio::cancellation_type;
        if (!!(type & (cancellation_type::terminal | cancellation_type::partial | cancellation_type::total)))
            reactor_->cancel_ops_by_key(socket_, *data_, ad::reactor::read_op, this);
    }

private:
    ad::reactor* reactor_;
    ad::reactor::per_descriptor_data* data_;
    ad::socket_type socket_;
};

}  // namespace drain_aware
#endif

/// A plain connection's socket (see the top of this file). Everything else is tcp::socket's.
class DrainAwareSocket : public boost::asio::ip::tcp::socket {
public:
    /// Turns TCP_INQ on for `s` (see the top of this file); should the kernel refuse it, reads never report the
    /// socket exhausted and every read tries the socket first, as Asio's own.
    explicit DrainAwareSocket(boost::asio::ip::tcp::socket&& s) : boost::asio::ip::tcp::socket(std::move(s)) {
#ifdef ORDERHUB_DRAIN_AWARE_READ
        const int on = 1;
        if (is_open()) (void)::setsockopt(native_handle(), SOL_TCP, TCP_INQ, &on, sizeof on);
#endif
    }

    /// Reads after an edge go through `ring` (see the top of this file); only for a socket whose io_context one thread
    /// runs, as the ring's.
    void use_ring(std::shared_ptr<BurstRing> ring) { ring_ = std::move(ring); }

    /// async_read_some into one buffer; a read after which the kernel counts nothing left in the socket (no byte, no
    /// end of stream) has the next read on it wait for the socket's next edge instead of trying it first.
    template <class Token>
    auto async_read_marking_drained(boost::asio::mutable_buffer buffer, Token&& token) {
#ifdef ORDERHUB_DRAIN_AWARE_READ
        return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
            [this](auto handler, boost::asio::mutable_buffer b) { this->start(std::move(handler), b); }, token, buffer);
#else
        return async_read_some(buffer, std::forward<Token>(token));
#endif
    }

private:
#ifdef ORDERHUB_DRAIN_AWARE_READ
    template <class Handler>
    void start(Handler handler, boost::asio::mutable_buffer b) {
        namespace ad = drain_aware::ad;
        using Op = drain_aware::RecvOp<Handler, executor_type>;
        auto& impl = impl_.get_implementation();
        auto& reactor =
            boost::asio::use_service<ad::reactor>(boost::asio::query(get_executor(), boost::asio::execution::context));
        const bool is_continuation = boost_asio_handler_cont_helpers::is_continuation(handler);
        auto slot = boost::asio::get_associated_cancellation_slot(handler);
        typename Op::ptr p = {ad::addressof(handler), Op::ptr::allocate(handler), nullptr};
        p.p = new (p.v) Op(impl.socket_, b, handler, get_executor());
        if (slot.is_connected())
            p.p->cancellation_key_ =
                &slot.template emplace<drain_aware::Cancellation>(&reactor, &impl.reactor_data_, impl.socket_);
        // As reactive_socket_service_base::start_op: the socket non-blocking for the reactor, or the error reported.
        if (b.size() > 0 && ((impl.state_ & ad::socket_ops::non_blocking) != 0 ||
                             ad::socket_ops::set_internal_non_blocking(impl.socket_, impl.state_, true, p.p->ec_)))
            reactor.start_op(ad::reactor::read_op, impl.socket_, impl.reactor_data_, p.p, is_continuation, true);
        else
            reactor.post_immediate_completion(p.p, is_continuation);
        // Set after the first try, which reads here (the socket may be empty); the operation is not run before this
        // thread returns to the io_context, the only one that runs it.
        if (ring_) p.p->use_ring(ring_.get(), &reactor, this, &impl.reactor_data_);
        p.v = p.p = nullptr;
    }
#endif
    std::shared_ptr<BurstRing> ring_;
};

}  // namespace common::http::detail
