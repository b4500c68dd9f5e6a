// The example attendance terminal arrives with its own issue; this placeholder keeps the target buildable.
import Foundation
import ProfirestAPI

print("Pichacka: the example terminal is not written yet.")
