#include "common/http/burst_ring.hpp"

#include <liburing.h>
#include <boost/asio/append.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>

#include "common/log/log.hpp"

namespace common::http::detail {

struct BurstRing::Ring {
    io_uring ring{};
    /// Waits on the ring for a completion the kernel did not give at submission (not expected with MSG_DONTWAIT;
    /// opened only then, so that the completions of every burst do not wake the network thread's epoll).
    std::optional<boost::asio::posix::stream_descriptor> late;
};

/// Holds the ring for a handler the io_context runs later (the flush of a burst, the wait for a late completion).
/// Destroyed without having run (the io_context going away with it pending), it lets go of the waiting coroutines,
/// which hold the server.
struct BurstRing::Held {
    std::shared_ptr<BurstRing> ring;
    explicit Held(std::shared_ptr<BurstRing> r) : ring(std::move(r)) {}
    Held(Held&&) noexcept = default;
    Held& operator=(Held&&) noexcept = default;
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held() {
        if (ring) ring->abandon();
    }
    /// The ring, no longer held: the handler runs.
    std::shared_ptr<BurstRing> take() { return std::exchange(ring, nullptr); }
};

/// The flush of a burst, posted once its first send is queued.
struct BurstRing::Flush {
    Held held;
    void operator()() { held.take()->flush(); }
};

std::shared_ptr<BurstRing> BurstRing::open(boost::asio::io_context& io, std::string& why, unsigned entries) {
    std::shared_ptr<BurstRing> r(new BurstRing(io));
    const int rc = io_uring_queue_init(entries, &r->ring_->ring, 0);
    if (rc < 0) {
        why = std::string("io_uring_queue_init: ") + std::strerror(-rc);
        r->ring_.reset();
        return nullptr;
    }
    return r;
}

BurstRing::BurstRing(boost::asio::io_context& io) : io_(io), ring_(std::make_unique<Ring>()) {}

BurstRing::~BurstRing() {
    if (!ring_) return;
    let_go_of_late();
    io_uring_queue_exit(&ring_->ring);
}

void BurstRing::let_go_of_late() {
    if (!ring_->late) return;
    boost::system::error_code ignored;
    ring_->late->cancel(ignored);
    (void)ring_->late->release();  // the ring's own descriptor: io_uring_queue_exit closes it
    ring_->late.reset();
}

void BurstRing::queue(boost::asio::ip::tcp::socket& socket, msghdr* msg, Handler handler, bool receive) {
    const int fd = socket.native_handle();
    io_uring_sqe* sqe = nullptr;
    // Late completions pending (their slots must stay), a failed submission, or a full queue: done on its own.
    if (unanswered_ == 0 && !broken_.load(std::memory_order_relaxed)) sqe = io_uring_get_sqe(&ring_->ring);
    if (sqe == nullptr) {
        boost::asio::post(io_, boost::asio::append(std::move(handler), untried(receive)));
        return;
    }
    if (receive)
        io_uring_prep_recvmsg(sqe, fd, msg, MSG_DONTWAIT);
    else
        io_uring_prep_sendmsg(sqe, fd, msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, waiters_.size());
    waiters_.push_back(Waiter{std::move(handler), &socket, fd, sqe, receive, untried(receive)});
    if (!flush_posted_) {
        flush_posted_ = true;
        boost::asio::post(io_, Flush{Held(shared_from_this())});
    }
}

void BurstRing::flush() {
    flush_posted_ = false;
    const std::size_t fresh = waiters_.size() - submitted_;
    if (fresh == 0) return;
    // A socket closed since its send or read was queued: its number may name another descriptor by now, so nothing is
    // done on it. (The server closes no socket while its answer or read waits here: the connection's deadline is
    // disarmed for the write, a deadline or a stop cancels the socket's operations without closing it, and the
    // coroutine waiting here holds its connection; this holds should that change.)
    for (std::size_t k = submitted_; k < waiters_.size(); ++k) {
        Waiter& w = waiters_[k];
        if (!w.socket->is_open() || w.socket->native_handle() != w.fd) {
            io_uring_prep_nop(w.sqe);
            io_uring_sqe_set_data64(w.sqe, k);
            w.result = -EBADF;
            w.fd = -1;
        }
        w.sqe = nullptr;
    }
    const int rc = io_uring_submit(&ring_->ring);
    const std::size_t taken = rc < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(rc), fresh);
    if (taken < fresh) {
        // The kernel took the queue in order and stopped: what it did not take is never submitted (no further
        // submission on this ring), so it is done on its own (its result stays untried()), and every later one too.
        broken_.store(true, std::memory_order_relaxed);
        for (std::size_t k = submitted_ + taken; k < waiters_.size(); ++k) waiters_[k].done = true;
        common::log::warn("answers and reads take one system call each from now: io_uring refused a submission",
                          {{"error", rc < 0 ? std::string(std::strerror(-rc)) : std::string("short submission")}});
    }
    submitted_ += taken;
    unanswered_ += taken;
    reap();
    complete();
    if (unanswered_ > 0) wait_for_late();
}

void BurstRing::reap() {
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_cqe* cqe = nullptr;
    io_uring_for_each_cqe(&ring_->ring, head, cqe) {
        const auto slot = static_cast<std::size_t>(io_uring_cqe_get_data64(cqe));
        if (slot < submitted_ && !waiters_[slot].done) {
            int res = cqe->res;
            if (res == -EINVAL || res == -EOPNOTSUPP) {
                // A kernel whose io_uring lacks the operation or its flags: nothing was sent or read, and from now
                // on every answer and read goes on its own.
                if (!broken_.exchange(true, std::memory_order_relaxed))
                    common::log::warn("answers and reads take one system call each from now: io_uring refused one",
                                      {{"error", std::string(std::strerror(-res))}});
                res = untried(waiters_[slot].receive);
            }
            if (waiters_[slot].fd >= 0) waiters_[slot].result = res;  // a closed socket's stays -EBADF
            waiters_[slot].done = true;
            --unanswered_;
        }
        ++seen;
    }
    io_uring_cq_advance(&ring_->ring, seen);
}

void BurstRing::complete() {
    // Moved out before any is called: a resumed coroutine may queue its next send at once.
    std::vector<std::pair<Handler, int>> due;
    due.reserve(waiters_.size());
    for (auto& w : waiters_)
        if (w.done && w.handler) due.emplace_back(std::move(w.handler), w.result);
    if (unanswered_ == 0) {
        waiters_.clear();
        submitted_ = 0;
    }
    for (auto& [handler, result] : due) std::move(handler)(result);
}

/// The wait for completions the kernel did not give at submission.
struct BurstRing::LateWait {
    Held held;
    void operator()(const boost::system::error_code& ec) {
        const auto self = held.take();
        if (ec == boost::asio::error::operation_aborted) return;  // let go of by let_go_of_late
        self->reap();
        self->complete();
        if (self->unanswered_ > 0)
            self->wait_for_late();
        else
            self->let_go_of_late();
    }
};

void BurstRing::wait_for_late() {
    // The ring's descriptor is readable while completions wait in it; watched only now, so that the completions of
    // every burst, taken at once, do not wake the network thread's epoll.
    if (!ring_->late) ring_->late.emplace(io_, ring_->ring.ring_fd);
    ring_->late->async_wait(boost::asio::posix::descriptor_base::wait_read, LateWait{Held(shared_from_this())});
}

void BurstRing::abandon() {
    flush_posted_ = false;
    auto doomed = std::move(waiters_);
    waiters_.clear();
    submitted_ = 0;
    unanswered_ = 0;
    broken_.store(true, std::memory_order_relaxed);  // a send the kernel may still hold: this ring takes no more
}

}  // namespace common::http::detail
