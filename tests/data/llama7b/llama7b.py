"""A Llama with 6.7 B parameters, from transformers' config (no weights are downloaded):
checked on meta by tests/test_real_models.py and bench/bench_meta.py."""

import torch
from transformers import LlamaConfig, LlamaForCausalLM


class Llama7B(torch.nn.Module):
    def __init__(self):
        super().__init__()
        config = LlamaConfig(
            vocab_size=32000,
            hidden_size=4096,
            intermediate_size=11008,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=32,
            use_cache=False,
        )
        self.llama = LlamaForCausalLM(config)

    def forward(self, input_ids):
        return self.llama(input_ids=input_ids).logits
