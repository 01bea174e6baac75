from models.base import Base


class App(Base):
    pass
