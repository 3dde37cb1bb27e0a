"""What calls do: the effects of commands on files, the network and the system."""
