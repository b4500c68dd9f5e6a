// profirest-codegen: writes Sources/ProfirestAPI/Generated (and, given a second folder, the testing kit's
// Sources/ProfirestTesting/Generated) from the contract, or checks that they have not drifted.
//
//   swift run profirest-codegen generate contract/profirest-v2.openapi.json Sources/ProfirestAPI/Generated [KIT_DIR]
//   swift run profirest-codegen check    contract/profirest-v2.openapi.json Sources/ProfirestAPI/Generated [KIT_DIR]
import Foundation
import ProfirestCodegenKit

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 5, ["generate", "check"].contains(arguments[1]) else {
    FileHandle.standardError.write(Data("usage: profirest-codegen generate|check CONTRACT.json OUTPUT_DIR [TESTING_KIT_DIR]\n".utf8))
    exit(2)
}
do {
    let generator = try Generator(contract: try Data(contentsOf: URL(fileURLWithPath: arguments[2])))
    let output = URL(fileURLWithPath: arguments[3], isDirectory: true)
    let kit = arguments.count == 5 ? URL(fileURLWithPath: arguments[4], isDirectory: true) : nil
    if arguments[1] == "generate" {
        try generator.write(to: output)
        print("profirest-codegen: wrote \(output.path)")
        if let kit {
            try generator.writeTestingKit(to: kit)
            print("profirest-codegen: wrote \(kit.path)")
        }
    } else {
        let drifted = try generator.drift(in: output)
            + (try kit.map { try generator.testingKitDrift(in: $0).map { "\($0) (testing kit)" } } ?? [])
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
