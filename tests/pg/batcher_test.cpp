// Group commit's batching policy (common::db::Batcher) on real pool workers: jobs queued together are shared
// fairly between the batches that may run at once, and every job is answered by its own batch's result.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "common/db/batcher.hpp"
#include "common/db/pool.hpp"
#include "tests/pg/support.hpp"

namespace asio = boost::asio;

namespace {

// Submits `job` from a coroutine of `ioc`; its answer lands in `out`.
void submit_to(asio::io_context& ioc, common::db::Batcher<int, int>& batcher, int job, int& out) {
    asio::co_spawn(
        ioc,
        [](common::db::Batcher<int, int>& b, int j, int& o) -> asio::awaitable<void> { o = co_await b.submit(j); }(
                                                                batcher, job, out),
        asio::detached);
}

// Holds all `workers` of `pool` while jobs 0 .. count-1 are submitted to `batcher` (a wave of requests that arrives
// while every worker is busy), then lets the workers go and runs `ioc` until every job is answered: the answers.
std::vector<int> submit_while_held(asio::io_context& ioc, common::db::Pool& pool, std::size_t workers,
                                   common::db::Batcher<int, int>& batcher, int count) {
    std::promise<void> release;
    auto released = release.get_future().share();
    for (std::size_t i = 0; i < workers; ++i)
        pool.enqueue([released](pqxx::connection*, std::exception_ptr) { released.wait(); });
    std::vector<int> answers(static_cast<std::size_t>(count), -1);
    for (int i = 0; i < count; ++i) submit_to(ioc, batcher, i, answers[static_cast<std::size_t>(i)]);
    ioc.poll();  // every coroutine has submitted its job
    release.set_value();
    ioc.run();
    return answers;
}

// One pool worker and a batcher on it whose batches answer each job with job + 1 and record their sizes; the
// first batch takes `first_batch` longer (a slow statement and commit).
struct OneWorker {
    explicit OneWorker(std::chrono::milliseconds gather,
                       std::chrono::milliseconds first_batch = std::chrono::milliseconds(0))
        : pool({.url = db.url(), .workers = 1, .on_connect = {}}),
          batcher(
              pool,
              [this, first_batch](pqxx::connection& c, std::span<int> jobs, std::span<int> results,
                                  std::span<std::exception_ptr>) {
                  pqxx::nontransaction(c).exec("SELECT 1");
                  for (std::size_t i = 0; i < jobs.size(); ++i) results[i] = jobs[i] + 1;
                  if (sizes.empty()) std::this_thread::sleep_for(first_batch);
                  sizes.push_back(jobs.size());
              },
              256, 1, std::chrono::microseconds(1000), gather) {}

    tests::TempDatabase db;
    asio::io_context ioc;
    common::db::Pool pool;
    std::vector<std::size_t> sizes;  // touched by the one pool worker only, read after ioc.run()
    common::db::Batcher<int, int> batcher;
};

}  // namespace

TEST_CASE("batcher: jobs waiting together are shared between the batches that run at once", "[batcher]") {
    tests::TempDatabase db;
    asio::io_context ioc;
    common::db::Pool pool({.url = db.url(), .workers = 2, .on_connect = {}});
    std::mutex mutex;
    std::condition_variable both_in;
    int inside = 0;
    std::vector<std::size_t> sizes;
    common::db::Batcher<int, int> batcher(
        pool,
        [&](pqxx::connection& c, std::span<int> jobs, std::span<int> results, std::span<std::exception_ptr>) {
            pqxx::nontransaction(c).exec("SELECT 1");  // a real round trip on the worker's connection
            for (std::size_t i = 0; i < jobs.size(); ++i) results[i] = jobs[i] * 10;
            std::unique_lock lock(mutex);
            sizes.push_back(jobs.size());
            // Two batches run side by side, as under load; one that waits alone gives up after 3 s.
            ++inside;
            both_in.notify_all();
            both_in.wait_for(lock, std::chrono::seconds(3), [&] { return inside >= 2; });
        },
        256, 2);

    // Both workers are held while ten jobs queue up, as when a wave of requests arrives during two batches.
    constexpr int kJobs = 10;
    const auto answers = submit_while_held(ioc, pool, 2, batcher, kJobs);

    for (int i = 0; i < kJobs; ++i) CHECK(answers[i] == i * 10);
    // Not one batch of ten beside an empty one: each of the two batches that run at once takes its half.
    std::sort(sizes.begin(), sizes.end());
    CHECK(sizes == std::vector<std::size_t>{5, 5});
}

TEST_CASE("batcher: batches that follow each other run on one worker's connection", "[batcher]") {
    tests::TempDatabase db;
    asio::io_context ioc;
    common::db::Pool pool({.url = db.url(), .workers = 4, .on_connect = {}});
    std::vector<int> backends;  // the backend of each batch, in order (one batch runs at a time)
    common::db::Batcher<int, int> batcher(
        pool,
        [&](pqxx::connection& c, std::span<int> jobs, std::span<int> results, std::span<std::exception_ptr>) {
            pqxx::nontransaction(c).exec("SELECT 1");
            for (std::size_t i = 0; i < jobs.size(); ++i) results[i] = jobs[i] + 1;
            backends.push_back(c.backendpid());
        },
        2, 1);

    // Every worker is held while sixteen jobs queue up: then eight batches of two follow each other, while the
    // other three workers wait for work.
    constexpr int kJobs = 16;
    const auto answers = submit_while_held(ioc, pool, 4, batcher, kJobs);

    for (int i = 0; i < kJobs; ++i) CHECK(answers[i] == i + 1);
    REQUIRE(backends.size() == 8);
    // The worker that ran the first batch ran the next ones with its connection: no hand-off to another worker
    // (whose backend would have to wake as well) between batches while jobs were waiting.
    CHECK(std::count(backends.begin(), backends.end(), backends.front()) == 8);
}

TEST_CASE("batcher: with a gather time, a job that finds it idle waits for the jobs that follow", "[batcher]") {
    tests::TempDatabase db;
    asio::io_context ioc;
    common::db::Pool pool({.url = db.url(), .workers = 1, .on_connect = {}});
    std::mutex mutex;
    std::vector<std::size_t> sizes;
    common::db::Batcher<int, int> batcher(
        pool,
        [&](pqxx::connection& c, std::span<int> jobs, std::span<int> results, std::span<std::exception_ptr>) {
            pqxx::nontransaction(c).exec("SELECT 1");
            for (std::size_t i = 0; i < jobs.size(); ++i) results[i] = jobs[i] * 10;
            std::lock_guard lock(mutex);
            sizes.push_back(jobs.size());
        },
        256, 1, std::chrono::microseconds(1000), std::chrono::seconds(2));

    // One job alone, then four more 50 ms later: well within the 2 s the first one waits for company.
    constexpr int kJobs = 5;
    std::vector<int> answers(kJobs, -1);
    auto submit = [&](int i) { submit_to(ioc, batcher, i, answers[i]); };
    submit(0);
    asio::steady_timer later(ioc, std::chrono::milliseconds(50));
    later.async_wait([&](const boost::system::error_code&) {
        for (int i = 1; i < kJobs; ++i) submit(i);
    });
    ioc.run();

    for (int i = 0; i < kJobs; ++i) CHECK(answers[i] == i * 10);
    CHECK(sizes == std::vector<std::size_t>{5});
}

TEST_CASE("batcher: a client that waits for each answer stops gathering, and company brings it back", "[batcher]") {
    OneWorker w(std::chrono::milliseconds(50));
    auto& ioc = w.ioc;
    auto& sizes = w.sizes;
    auto& batcher = w.batcher;
    CHECK(batcher.gathers());

    // One job at a time, each sent after the answer to the last: no gather can catch anything, and about a dozen
    // are enough to stop gathering. (A job sent before the worker has counted its batch finished finds it busy,
    // not idle; it waits out its gather from when it came, and catches nobody either. The count of jobs is bounded,
    // not exact. The coroutines take what they use
    // as parameters: a lambda's captures would die with the lambda, before the frame.)
    int in_turn = 0;
    asio::co_spawn(
        ioc,
        [](common::db::Batcher<int, int>& b, int& answered) -> asio::awaitable<void> {
            for (int i = 0; i < 200 && b.gathers(); ++i)
                if (co_await b.submit(i) == i + 1) ++answered;
        }(batcher, in_turn),
        asio::detached);
    ioc.run();
    CHECK_FALSE(batcher.gathers());
    CHECK(in_turn >= 11);
    CHECK(std::count(sizes.begin(), sizes.end(), 1) == in_turn);

    // Then jobs in pairs: the first of each finds the batcher idle and, now, does not wait, until a probe
    // (one idle start in GatherPolicy::kProbeEvery) waits and its pair's second job joins it.
    sizes.clear();
    int answered = 0;
    int pairs = 0;
    while (!batcher.gathers() && pairs < 1000) {
        ++pairs;
        for (int k = 0; k < 2; ++k)
            asio::co_spawn(
                ioc,
                [](common::db::Batcher<int, int>& b, int job, int& count) -> asio::awaitable<void> {
                    if (co_await b.submit(job) == job + 1) ++count;
                }(batcher, k, answered),
                asio::detached);
        ioc.restart();
        ioc.run();
    }
    CHECK(answered == 2 * pairs);
    CHECK(batcher.gathers());
    CHECK(pairs < 1000);
    REQUIRE_FALSE(sizes.empty());
    CHECK(sizes.back() == 2);  // the probe's batch held both jobs of its pair
}

TEST_CASE("batcher: after a pause, large recent batches were a burst, not load: the next job gathers again",
          "[batcher]") {
    OneWorker w(std::chrono::milliseconds(300));
    auto& ioc = w.ioc;
    auto& sizes = w.sizes;
    auto& batcher = w.batcher;

    // Two bursts of eight, as the deliveries of one claim end together: each is one batch, and the batcher's
    // recent batches are now large (what, without a pause, means load: no gather, the worker's linger instead).
    std::vector<int> answers(10, -1);
    for (int burst = 0; burst < 2; ++burst) {
        for (int i = 0; i < 8; ++i) submit_to(ioc, batcher, i, answers[i]);
        ioc.restart();
        ioc.run();
        std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the pause between claims
    }
    REQUIRE(sizes == std::vector<std::size_t>{8, 8});

    // After the pause, a job alone and another 30 ms later: the first waits for company and they share a batch.
    submit_to(ioc, batcher, 8, answers[8]);
    asio::steady_timer later(ioc, std::chrono::milliseconds(30));
    later.async_wait([&](const boost::system::error_code&) { submit_to(ioc, batcher, 9, answers[9]); });
    ioc.restart();
    ioc.run();
    CHECK(answers[8] == 9);
    CHECK(answers[9] == 10);
    CHECK(sizes == std::vector<std::size_t>{8, 8, 2});
}

TEST_CASE("batcher: at light load, a job that came while a batch ran waits out its gather for company", "[batcher]") {
    // The first batch is slow, as a statement and its commit are at 300 orders/s beside the next order.
    OneWorker w(std::chrono::milliseconds(300), std::chrono::milliseconds(200));
    auto& ioc = w.ioc;
    auto& sizes = w.sizes;
    auto& batcher = w.batcher;

    // Job 0 gathers for 300 ms, finds nobody and runs until about 500 ms; job 1 comes at 400 ms, while it runs,
    // and job 2 at 550 ms, within job 1's gather (until 700 ms): jobs 1 and 2 share a batch.
    std::vector<int> answers(3, -1);
    submit_to(ioc, batcher, 0, answers[0]);
    asio::steady_timer first(ioc, std::chrono::milliseconds(400));
    first.async_wait([&](const boost::system::error_code&) { submit_to(ioc, batcher, 1, answers[1]); });
    asio::steady_timer second(ioc, std::chrono::milliseconds(550));
    second.async_wait([&](const boost::system::error_code&) { submit_to(ioc, batcher, 2, answers[2]); });
    ioc.run();
    CHECK(answers == std::vector<int>{1, 2, 3});
    CHECK(sizes == std::vector<std::size_t>{1, 2});
}
