// The one translation unit that compiles Asio, Asio.SSL and Beast (separate compilation): every
// other file sees only their declarations, which keeps a clean build within minutes on two cores.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
