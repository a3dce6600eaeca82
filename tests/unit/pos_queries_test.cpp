#include <catch2/catch.hpp>
#include <string>

#include "pos/store/queries.hpp"

namespace pos_sql = pos::store::sql;

TEST_CASE("pos statements: the priced-menu upserts are whole texts that differ only in their table", "[pos]") {
    const std::string products = pos_sql::kUpsertProducts.sql;
    const std::string modifiers = pos_sql::kUpsertModifiers.sql;
    CHECK(products.size() + 1 == pos_sql::kUpsertProductsText.size());  // one '\0', at the end
    CHECK(modifiers.size() + 1 == pos_sql::kUpsertModifiersText.size());
    CHECK(products.rfind("\nINSERT INTO pos.products AS t (brand_id, id, name, price)\nSELECT ", 0) == 0);
    CHECK(products.ends_with("\nRETURNING (xmax = 0) AS inserted"));
    std::string renamed = modifiers;
    renamed.replace(renamed.find("pos.modifiers"), std::string("pos.modifiers").size(), "pos.products");
    CHECK(renamed == products);
}
