"""SkyRL: register tessera's text environment, then name it in the dataset.

    python -c "import skyrl_env" && ... (or call register() in your entry point)

Each row: {"prompt": [...], "env_class": "tessera-hgemm", "task": "4096x4096x4096"} (SkyRL's
PromptDataset passes every column but prompt and env_class to the environment as extras);
SkyRL adds extras["max_turns"] from generator.max_turns. init() replaces the
prompt with the environment's task prompt; each step() returns the harness's
feedback as the next user message and the turn's reward.
"""

from tessera.hooks.skyrl import ENV_CLASS, register

register()
print(f"registered {ENV_CLASS}")
