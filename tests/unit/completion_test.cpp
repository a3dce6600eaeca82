// How a coroutine that waits for another thread's work is resumed (common::db::Completion, await_completion): a
// post per completion from any thread, or many resumed at once from one handler on their executor, as the ingest
// pipe answers a statement's orders (hub/ingest/pipe.cpp).
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/db/batcher.hpp"

namespace asio = boost::asio;
using common::db::Completion;

namespace {

/// Awaits a completion that `start` keeps, and writes what it resumed with (or the error's text) to `out`.
asio::awaitable<void> wait_one(std::vector<Completion<int>>& kept, std::vector<std::string>& out) {
    try {
        const int v = co_await common::db::await_completion<int>(
            [&kept](Completion<int> complete, const asio::any_io_executor&) { kept.push_back(std::move(complete)); });
        out.push_back(std::to_string(v));
    } catch (const std::exception& e) {
        out.push_back(e.what());
    }
}

/// As the order store's start does (`auto complete, auto executor`): takes the completion and the executor by
/// value, keeps both, and records the value and the thread it was resumed on. A function, not a lambda: a lambda
/// coroutine's captures die with the lambda, at the end of the co_spawn statement.
asio::awaitable<void> wait_by_value(std::vector<Completion<int>>& kept, std::vector<asio::any_io_executor>& given,
                                    int& value, std::thread::id& resumed_on) {
    value = co_await common::db::await_completion<int>([&kept, &given](auto complete, auto executor) {
        kept.push_back(std::move(complete));
        given.push_back(std::move(executor));
    });
    resumed_on = std::this_thread::get_id();
}

}  // namespace

TEST_CASE("completion: completed from another thread, the coroutine resumes on its own executor", "[batcher]") {
    asio::io_context io;
    std::vector<Completion<int>> kept;
    std::vector<std::string> out;
    asio::co_spawn(io, wait_one(kept, out), asio::detached);
    io.poll();
    REQUIRE(kept.size() == 1);
    CHECK(kept[0].executor() == asio::any_io_executor(io.get_executor()));
    std::thread other([&kept] { kept[0](nullptr, 7); });
    other.join();
    CHECK(out.empty());  // posted, not run on the other thread
    io.run();            // the waiter's work kept run() from returning before it
    CHECK(out == std::vector<std::string>{"7"});
}

TEST_CASE("completion: a start that takes its arguments by value still resumes on the coroutine's thread",
          "[batcher]") {
    asio::io_context io;
    std::vector<Completion<int>> kept;
    std::vector<asio::any_io_executor> given;
    std::thread::id resumed_on;
    int value = 0;
    asio::co_spawn(io, wait_by_value(kept, given, value, resumed_on), asio::detached);
    io.poll();
    REQUIRE(kept.size() == 1);
    CHECK(kept[0].executor() == asio::any_io_executor(io.get_executor()));
    CHECK(given[0] == asio::any_io_executor(io.get_executor()));
    std::thread other([&kept] { kept[0](nullptr, 9); });
    const std::thread::id other_id = other.get_id();
    other.join();
    io.run();
    CHECK(value == 9);
    CHECK(resumed_on == std::this_thread::get_id());
    CHECK(resumed_on != other_id);
}

TEST_CASE("completion: waiters resumed together from one handler, in order, each before the handler ends",
          "[batcher]") {
    asio::io_context io;
    std::vector<Completion<int>> kept;
    std::vector<std::string> out;
    for (int i = 0; i < 3; ++i) asio::co_spawn(io, wait_one(kept, out), asio::detached);
    io.poll();
    REQUIRE(kept.size() == 3);
    std::vector<std::size_t> seen_by_handler;
    asio::post(io, [&] {
        kept[2].resume(nullptr, 3);
        seen_by_handler.push_back(out.size());
        kept[0].resume(nullptr, 1);
        seen_by_handler.push_back(out.size());
        kept[1].resume(std::make_exception_ptr(std::runtime_error("store down")), 0);
        seen_by_handler.push_back(out.size());
    });
    io.run();
    CHECK(seen_by_handler == std::vector<std::size_t>{1, 2, 3});
    CHECK(out == std::vector<std::string>{"3", "1", "store down"});
}

TEST_CASE("completion: a plain function, without an executor, is called where it is completed", "[batcher]") {
    int got = 0;
    Completion<int> c([&got](std::exception_ptr, int v) { got = v; });
    CHECK(bool(c));
    CHECK(c.executor() == nullptr);
    c(nullptr, 4);
    CHECK(got == 4);
    CHECK_FALSE(bool(Completion<int>()));
}

TEST_CASE("completion: assigning one over another drops the handler held before and keeps the new one's", "[batcher]") {
    // A counter of the copies alive of what a handler owns: Boost 1.81's any_completion_handler assignment would
    // keep its source inside a second handler; Completion's own moves it.
    auto owned = std::make_shared<int>(0);
    int first = 0;
    int second = 0;
    Completion<int> c([&first, owned](std::exception_ptr, int v) { first = v; });
    CHECK(owned.use_count() == 2);
    Completion<int> other([&second](std::exception_ptr, int v) { second = v; });
    c = std::move(other);
    CHECK(owned.use_count() == 1);  // the first handler is gone with the assignment
    CHECK_FALSE(bool(other));       // NOLINT(bugprone-use-after-move): moved from, it is empty
    c(nullptr, 7);
    CHECK(first == 0);
    CHECK(second == 7);
    CHECK_FALSE(bool(c));  // used up
}
