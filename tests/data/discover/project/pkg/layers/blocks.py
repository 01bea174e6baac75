from ..core import Core


class Block(Core):
    pass
