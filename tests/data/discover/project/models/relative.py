from .base import Base


class Relative(Base):
    def forward(self, x, y):
        return x + y
