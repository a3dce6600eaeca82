#include "pos/store/intake.hpp"

#include "common/db/batcher.hpp"

namespace pos::store {

struct OrderIntake::Impl {
    Impl(common::db::Pool& pool, std::size_t max_batch, std::size_t max_concurrent, std::chrono::microseconds gather)
        : batcher(
              pool,
              [](pqxx::connection& c, std::span<OrderSubmission> jobs, std::span<SubmitResult> results,
                 std::span<std::exception_ptr> errors) { submit_orders(c, jobs, results, errors); },
              max_batch, max_concurrent, std::chrono::microseconds(1000), gather) {}
    common::db::Batcher<OrderSubmission, SubmitResult> batcher;
};

OrderIntake::OrderIntake(common::db::Pool& pool, std::size_t max_batch, std::size_t max_concurrent,
                         std::chrono::microseconds gather)
    : impl_(std::make_unique<Impl>(pool, max_batch, max_concurrent, gather)) {}

OrderIntake::~OrderIntake() = default;

boost::asio::awaitable<SubmitResult> OrderIntake::submit(OrderSubmission submission) {
    co_return co_await impl_->batcher.submit(std::move(submission));
}

}  // namespace pos::store
