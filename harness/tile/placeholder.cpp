// Replaced by the tile compiler's sources.
namespace tessera::tile {}
