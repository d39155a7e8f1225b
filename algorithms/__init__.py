"""Pure numerics: data, losses, mechanisms, optimisers. Never imports ``engine``; never prints."""
