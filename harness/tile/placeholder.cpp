// placeholder until the tile compiler lands
namespace tessera::tile {}
