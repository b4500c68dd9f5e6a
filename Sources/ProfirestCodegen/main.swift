// profirest-codegen: writes Sources/ProfirestAPI/Generated from the contract, or checks that it has not drifted.
//
//   swift run profirest-codegen generate contract/profirest-v2.openapi.json Sources/ProfirestAPI/Generated
//   swift run profirest-codegen check    contract/profirest-v2.openapi.json Sources/ProfirestAPI/Generated
import Foundation
import ProfirestCodegenKit

let arguments = CommandLine.arguments
guard arguments.count == 4, ["generate", "check"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: profirest-codegen generate|check CONTRACT.json OUTPUT_DIR\n".utf8))
    exit(2)
}
do {
    let generator = try Generator(contract: try Data(contentsOf: URL(fileURLWithPath: arguments[2])))
    let output = URL(fileURLWithPath: arguments[3], isDirectory: true)
    if arguments[1] == "generate" {
        try generator.write(to: output)
        print("profirest-codegen: wrote \(output.path)")
    } else {
        let drifted = try generator.drift(in: output)
        if drifted.isEmpty {
            print("profirest-codegen: generated files match the contract")
        } else {
            FileHandle.standardError.write(Data("profirest-codegen: generated files drifted from the contract: \(drifted.joined(separator: ", ")). Run `make generate` and commit.\n".utf8))
            exit(1)
        }
    }
} catch {
    FileHandle.standardError.write(Data("profirest-codegen: \(error)\n".utf8))
    exit(1)
}
