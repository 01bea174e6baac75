import models.base as mb


class ViaModuleAlias(mb.Base):
    pass
