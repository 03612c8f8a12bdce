"""The control plane's route groups: deployments (v2), OAuth providers (Auth Service v2), system."""
