from models.base import Base


class Absolute(Base):
    pass
