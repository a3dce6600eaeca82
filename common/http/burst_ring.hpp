#pragma once

// The answers of one burst sent, and the requests of one burst read, with one system call each (internal to
// common/http/server.cpp). When a group commit ends, the hub answers its twenty or thirty requests one after
// another; each answer's sendmsg is a system call, and on a virtual machine a system call costs about a microsecond
// before it does any work. A BurstRing queues the sends of a burst on an io_uring submission queue and submits them
// together once the burst's handlers have run: one io_uring_enter for the burst instead of one sendmsg per answer
// (docs/performance.md, "The answers of a burst in one system call"). Each send carries MSG_DONTWAIT, so the kernel
// completes it at once: with the bytes the socket took, or -EAGAIN when it took none; the server writes what is left
// as before (its write time-out, its asynchronous write), and a client that does not read never holds the network
// thread. The reads of the sockets one epoll_wait found readable go the same way (drain_aware_socket.hpp,
// queue_receive; docs/performance.md, "The requests of a burst in one system call").
//
// io_uring is often refused (Docker's and containerd's default seccomp profiles, kernel.io_uring_disabled, a kernel
// without it): open() then returns null and the server sends each answer with its own sendmsg and reads each
// request with its own recvmsg, as it did before. A kernel whose io_uring refuses a send or a read (EINVAL,
// EOPNOTSUPP) has the ring step aside for good; one that leaves an operation pending instead of completing it at once
// is waited for on the ring's descriptor, the next sends and reads meanwhile done on their own.
// For a server whose io_context runs on one thread only (the queue is not shared between threads).

#include <sys/socket.h>

#include <cerrno>

#include <atomic>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>
#include <string>
#include <vector>

struct io_uring_sqe;  // liburing.h, included by burst_ring.cpp only

namespace common::http::detail {

class BurstRing : public std::enable_shared_from_this<BurstRing> {
public:
    using Handler = boost::asio::any_completion_handler<void(int)>;

    /// A ring for the sends and reads of `io` (run by one thread) with room for `entries` of one turn (a power of
    /// two; the server's Limits::burst_ring_entries), or null when the host refuses io_uring (`why` says why).
    static std::shared_ptr<BurstRing> open(boost::asio::io_context& io, std::string& why, unsigned entries);
    ~BurstRing();
    BurstRing(const BurstRing&) = delete;
    BurstRing& operator=(const BurstRing&) = delete;

    /// Sends `msg` on `socket` with the burst it belongs to: completes, on the io_context's thread once the burst's
    /// handlers have run, with the bytes sent or -errno (-EAGAIN: the socket took nothing; -EBADF: the socket was
    /// closed meanwhile, and nothing was sent on the number it had). `socket`, `msg`, its iovecs and their bytes must
    /// stay valid until then.
    template <class Token>
    auto async_send(boost::asio::ip::tcp::socket& socket, const msghdr* msg, Token&& token) {
        return boost::asio::async_initiate<Token, void(int)>(
            [this](auto handler, boost::asio::ip::tcp::socket* s, const msghdr* m) {
                queue(*s, const_cast<msghdr*>(m), Handler(std::move(handler)), false);
            },
            token, &socket, msg);
    }

    /// Reads into `msg` from `socket` with the burst it belongs to (recvmsg, MSG_DONTWAIT): `handler` is called, on
    /// the io_context's thread once the burst's handlers have run, with the bytes read (0: end of stream) or -errno
    /// (-EAGAIN: nothing to read; -EBADF: the socket was closed meanwhile; -ECANCELED: the ring did not read, the
    /// caller is to read on its own). `socket`, `msg`, its iovec, control buffer and bytes must stay valid until then.
    void queue_receive(boost::asio::ip::tcp::socket& socket, msghdr* msg, Handler handler) {
        queue(socket, msg, std::move(handler), true);
    }

    /// False once the ring has stepped aside for good (a failed submission, a kernel that refused an operation):
    /// every send and read is then made on its own. Any thread.
    bool in_use() const { return !broken_.load(std::memory_order_relaxed); }

private:
    struct Ring;
    struct Held;
    struct Flush;
    struct LateWait;
    struct Waiter {
        Handler handler;
        boost::asio::ip::tcp::socket* socket = nullptr;
        int fd = -1;                    // the socket's number when queued
        ::io_uring_sqe* sqe = nullptr;  // until submitted
        bool receive = false;
        int result = -EAGAIN;  // until the kernel answers: untried(receive)
        bool done = false;
    };
    /// The result of an operation the kernel did not carry out: a send that sent nothing (-EAGAIN: the caller writes
    /// it on its own), a read that read nothing (-ECANCELED: the caller reads on its own).
    static int untried(bool receive) { return receive ? -ECANCELED : -EAGAIN; }
    explicit BurstRing(boost::asio::io_context& io);
    /// Queues the send or read of `msg` on `socket`; when the ring takes nothing now (late completions pending, a
    /// failed submission, a full queue), `handler` is posted with untried(receive).
    void queue(boost::asio::ip::tcp::socket& socket, msghdr* msg, Handler handler, bool receive);
    /// Submits what is queued, completes every send the kernel answered (all of them: MSG_DONTWAIT), and waits on the
    /// ring for any other.
    void flush();
    /// Reads the completions there are.
    void reap();
    /// Completes the answered waiters, in order.
    void complete();
    /// Nothing will flush any more (the io_context is going away): the waiters are destroyed unanswered, so that the
    /// coroutines they hold (which hold the server) are freed.
    void abandon();
    /// Watches the ring for the completions still missing after a flush.
    void wait_for_late();
    /// Stops watching the ring (its descriptor stays the ring's).
    void let_go_of_late();

    boost::asio::io_context& io_;
    std::unique_ptr<Ring> ring_;
    std::vector<Waiter> waiters_;  // by slot: submitted (up to submitted_) or queued
    std::size_t submitted_ = 0;
    std::size_t unanswered_ = 0;  // submitted, no completion yet
    bool flush_posted_ = false;
    /// A submission failed, or the kernel refused an operation: everything after goes back untried. Read by in_use()
    /// from any thread.
    std::atomic<bool> broken_{false};
};

}  // namespace common::http::detail
