#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>
#include <string>

#include "hub/dashboard/problems.hpp"

using namespace hub::dashboard;

namespace {

// Two lines as the hub sends them: a burger (mapped from the platform's BURGER-9) with two options, and fries.
const std::vector<OrderLine> kLines{
    {"BURGER-9", "P-BURGER", {{"M-CHEESE", "M-CHEESE"}, {"EXTRA-X", "EXTRA-X"}}},
    {"NOT-ON-MENU", "NOT-ON-MENU", {}},
};

// The reference POS's 422 (pos/http/responses.cpp validation_failed, pos/logic/menu_check.cpp).
constexpr const char* kUnknownItem = R"({"success":false,"message":"The selected products.1.id is invalid.",)"
                                     R"("errors":{"products.1.id":["The selected products.1.id is invalid."]}})";

}  // namespace

TEST_CASE("a product the POS does not know: the platform's item, its line and the map set command") {
    const auto p = explain_rejection(422, kUnknownItem, kLines, "prt_1", "DEMO-1");
    REQUIRE(p.size() == 1);
    CHECK(p[0].kind == "item");
    CHECK(p[0].line == 1);
    CHECK(p[0].option == -1);
    CHECK(p[0].external_id == "NOT-ON-MENU");
    CHECK(p[0].pos_id == "NOT-ON-MENU");
    CHECK(p[0].pos_message == "The selected products.1.id is invalid.");
    CHECK(p[0].text == "The POS does not know the item “NOT-ON-MENU” (line 2).");
    CHECK(p[0].fix ==
          "Map it with `orderhub map set --partner prt_1 --kind item --external NOT-ON-MENU --pos POS_PRODUCT_ID` "
          "or add “NOT-ON-MENU” to the POS menu, then send the order again.");
}

TEST_CASE("a modifier the POS does not know (modifiers or options keys), on a mapped item") {
    for (const std::string word : {"modifiers", "options"}) {
        const std::string key = "products.0." + word + ".1.id";
        const std::string body = R"({"success":false,"message":"x","errors":{")" + key + R"(":["The selected )" + key +
                                 R"( is invalid."]}})";
        const auto p = explain_rejection(422, body, kLines, "prt_1", "DEMO-1");
        REQUIRE(p.size() == 1);
        CHECK(p[0].kind == "option");
        CHECK(p[0].line == 0);
        CHECK(p[0].option == 1);
        CHECK(p[0].external_id == "EXTRA-X");
        CHECK(p[0].text == "The POS does not know the option “EXTRA-X” on line 1 (item “BURGER-9”).");
        CHECK(p[0].fix.find("--kind option --external EXTRA-X --pos POS_MODIFIER_ID") != std::string::npos);
    }
}

TEST_CASE("a product the POS has but not in the branch, and a mapped item says what it maps to") {
    const auto p =
        explain_rejection(422, R"({"errors":{"products.0.id":["Product P-BURGER is not available in branch B7."]}})",
                          kLines, "prt_1", "DEMO-1");
    REQUIRE(p.size() == 1);
    CHECK(p[0].kind == "item_unavailable");
    CHECK(p[0].text == "The POS has the item “BURGER-9”, mapped to “P-BURGER” (line 1) but not in this branch.");
    CHECK(p[0].fix.find("Make “P-BURGER” available for the branch in the POS") == 0);
}

TEST_CASE("several errors come in line order, with the branch first and other keys in the POS's words") {
    const auto p = explain_rejection(422,
                                     R"({"errors":{"products.10.id":["a"],"products.1.id":["b"],)"
                                     R"("branch_id":["The selected branch id is invalid."],"total":["bad total"],)"
                                     R"("products.1.quantity":["must be at least 1","and whole"]}})",
                                     kLines, "prt_1", "DEMO-1");
    REQUIRE(p.size() == 5);
    CHECK(p[0].kind == "branch");
    CHECK(p[0].fix ==
          "Set the branch's POS id with `orderhub branch update --id DEMO-1 --pos-branch-id POS_BRANCH_ID`, "
          "then send the order again.");
    CHECK(p[1].kind == "other");
    CHECK(p[1].text == "The POS refused “total”: bad total");
    CHECK(p[2].line == 1);
    CHECK(p[2].kind == "item");
    CHECK(p[3].kind == "other");
    CHECK(p[3].text == "The POS refused the item “NOT-ON-MENU” on line 2: must be at least 1 and whole");
    CHECK(p[4].line == 10);  // a line the order does not have: still listed, without ids
    CHECK(p[4].external_id.empty());
}

TEST_CASE("an answer cut short still names its keys, and answers without errors name nothing") {
    const std::string cut = std::string(kUnknownItem).substr(0, 110);  // ends inside the messages
    const auto p = explain_rejection(422, cut, kLines, "prt_1", "DEMO-1");
    REQUIRE(p.size() == 1);
    CHECK(p[0].kind == "item");
    CHECK(p[0].external_id == "NOT-ON-MENU");
    CHECK(p[0].pos_message.empty());
    CHECK(explain_rejection(422, R"({"message":"no"})", kLines, "p", "b").empty());
    CHECK(explain_rejection(422, "<html>bad gateway</html>", kLines, "p", "b").empty());
    CHECK(explain_rejection(500, kUnknownItem, kLines, "p", "b").empty());
    CHECK(explain_rejection(422, R"({"errors":["products.0.id"]})", kLines, "p", "b").empty());
    CHECK(explain_rejection(422, R"({"errors":{"products.99999999999.id":["x"]}})", kLines, "p", "b").size() == 1);
}

TEST_CASE("the problems as JSON number lines and options from 1") {
    const auto j = problems_json(explain_rejection(422, kUnknownItem, kLines, "prt_1", "DEMO-1"));
    REQUIRE(j.size() == 1);
    const auto& o = j[0].as_object();
    CHECK(o.at("line").as_int64() == 2);
    CHECK(o.at("option").is_null());
    CHECK(o.at("kind").as_string() == "item");
    CHECK(o.at("external_id").as_string() == "NOT-ON-MENU");
    CHECK(o.size() == 8);
}
