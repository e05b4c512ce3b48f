// bench:startup's floor: what importing the command-line parser alone costs.
import 'yargs'
