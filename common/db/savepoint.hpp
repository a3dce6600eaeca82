#pragma once

#include <exception>
#include <pqxx/pqxx>

#include "common/db/pool.hpp"

namespace common::db {

/// Whether the work done inside a savepoint stays (RELEASE) or is undone (ROLLBACK TO).
enum class Keep { yes, no };

/// Runs `work()` inside a savepoint of `tx`, so that one failing item of a batch does not take the others of its
/// transaction with it. Returns the error of `work` (the savepoint rolled back), or null. A lost connection or an
/// unavailable server is rethrown: the whole transaction is gone then. `work` returns Keep::no to undo what it did
/// without an error.
///
/// Written by hand: libpqxx 6.4's subtransaction sends its SAVEPOINT lazily, and not before a prepared
/// statement, so a failing first statement would abort the whole transaction, whose COMMIT then rolls back
/// without an error, after the items before it were answered as stored.
template <class Work>
std::exception_ptr in_savepoint(pqxx::work& tx, Work&& work) {
    tx.exec0("SAVEPOINT item");
    try {
        const Keep keep = work();
        tx.exec0(keep == Keep::yes ? "RELEASE SAVEPOINT item" : "ROLLBACK TO SAVEPOINT item");
        return nullptr;
    } catch (const pqxx::broken_connection&) {
        throw;
    } catch (const std::exception&) {
        if (is_unavailable(std::current_exception())) throw;
        auto error = std::current_exception();
        tx.exec0("ROLLBACK TO SAVEPOINT item");
        return error;
    }
}

}  // namespace common::db
