// Files imported `with { type: "text" }` are embedded in the binary as strings.
declare module "*.md" {
  const text: string;
  export default text;
}
declare module "*.txt" {
  const text: string;
  export default text;
}
declare module "*.html" {
  const text: string;
  export default text;
}
declare module "*.py" {
  const text: string;
  export default text;
}
