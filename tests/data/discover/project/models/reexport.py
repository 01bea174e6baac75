from models import Base


class ViaPackage(Base):
    pass
