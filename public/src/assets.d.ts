/** Style sheets the bundler takes into app.css. */
declare module "*.css";
