// Placeholder until the generator lands.
public enum Codegen {}
