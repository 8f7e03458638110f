"""The ranges the walkthrough's controls allow: one place for the sidebar, URLs and tests."""

H_RANGE = (1, 16)
D_HEAD_RANGE = (4, 64)
D_HEAD_STEP = 4
D_MODEL_CHOICES = (64, 128, 256, 512)
SEED_RANGE = (0, 9999)
MAX_SENTENCE = 400
