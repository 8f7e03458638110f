"""Chart builders, one module per lab (``base`` holds what they share): pure functions from data to Altair charts."""
